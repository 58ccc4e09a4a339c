"""``aiokafka.coordinator.assignors.sticky``."""
