"""An evaluation of the card models that the training generator does not shape.

Its own scene renderer (:mod:`.render`), its own artwork loading and index finding
(:mod:`.artwork`), the committed design split (:mod:`.split`, ``models/design_split.json``) and
its own scoring (:mod:`.score`), run by ``dealer-assist evaluate``. Nothing here imports the
training scene code (``dealer_assist.vision.scenes``, ``procedural``, ``dataset``); it runs the
shipped models through :class:`dealer_assist.vision.detector.CardDetector` and
:class:`dealer_assist.vision.tracker.CardTracker` as the table does.
"""
