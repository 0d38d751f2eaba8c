"""The casino floor: table boxes forward their signed recordings to one surveillance room, which
keeps every table's chain in PostgreSQL (``room.toml``: :mod:`.config`)."""
