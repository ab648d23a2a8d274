"""Message bus: a bytes-only Backend protocol, its engines, topic naming and the schema codec."""
