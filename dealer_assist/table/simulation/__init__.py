"""The simulated table: a seeded dealer and players (``world``), a camera that renders the felt
and reads it with the shipped detector (``synthetic_camera``), and the demo that deals through
the real table (``demo``, ``demo_cli``). Nothing here runs at a real table."""
