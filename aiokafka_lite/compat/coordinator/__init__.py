"""aiokafka's ``aiokafka.coordinator`` path, for its assignor modules."""
