"""The casino floor: table boxes forward their signed recordings over NATS JetStream to one
surveillance room, which ingests, verifies and serves them (docs/floor.md)."""
