"""``sys.modules["aiokafka"] = aiokafka_lite.compat`` is enough for code that imports aiokafka's modules
(how frameworks built on aiokafka, such as FastStream, run on aiokafka_lite): every module path such code
imports resolves to compat's one module, never to a second copy. Run in a child interpreter, since this
process also imports the real aiokafka for the interop tests."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import aiokafka_lite.compat
    sys.modules["aiokafka"] = aiokafka_lite.compat

    import aiokafka, aiokafka.admin, aiokafka.admin.client, aiokafka.errors
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
    from aiokafka.abc import AbstractTokenProvider, ConsumerRebalanceListener
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
    from aiokafka.consumer.consumer import AIOKafkaConsumer as C2
    from aiokafka.coordinator.assignors.abstract import AbstractPartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.errors import ConsumerStoppedError, KafkaError, UnsupportedCodecError
    from aiokafka.helpers import create_ssl_context
    from aiokafka.partitioner import DefaultPartitioner
    from aiokafka.producer.producer import _missing
    from aiokafka.structs import RecordMetadata

    import aiokafka_lite
    assert C2 is AIOKafkaConsumer is aiokafka_lite.compat.AIOKafkaConsumer
    assert aiokafka.admin.client is aiokafka_lite.compat.admin.client
    assert aiokafka.errors is aiokafka_lite.errors
    assert sys.modules["aiokafka.admin"] is aiokafka_lite.compat.admin
    assert issubclass(RoundRobinPartitionAssignor, AbstractPartitionAssignor)
    assert AIOKafkaAdminClient.__module__ == "aiokafka_lite.compat.admin.client"
    try:
        import aiokafka.client
    except ImportError:
        pass
    else:
        raise AssertionError("aiokafka's internals are not offered")
    print("ok")
""")


def test_one_alias_serves_every_aiokafka_module_path() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
