"""The runtime every processor stands on: bus, processor base classes, settings, errors."""
