"""The casino floor: table boxes forward their signed recordings over NATS JetStream
(:mod:`.forwarder`, :mod:`.wire`) to one surveillance room, which keeps every table's chain in
PostgreSQL (``room.toml``: :mod:`.config`; the room's consumer: :mod:`.room`)."""
