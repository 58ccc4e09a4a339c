"""aiokafka's assignor modules (``aiokafka.coordinator.assignors.*``), the native assignors under
aiokafka's names: a ``partition_assignment_strategy`` of these classes works as in aiokafka."""
