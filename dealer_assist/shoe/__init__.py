"""The electronic card shoe: protocol, decoder, reader, ASCII adapter, simulator, integrity.

See ``docs/shoe.md`` and ``hardware/shoe-protocol.md``. Importing this package does not import
pyserial; :mod:`dealer_assist.shoe.reader` does.
"""
