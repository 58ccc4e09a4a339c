# Sourced by Spark's launch scripts (SPARK_CONF_DIR, see spark-defaults.conf): the standalone cluster's master
# and worker JVMs get the same JIT setting as the drivers and executors.
SPARK_DAEMON_JAVA_OPTS="-XX:TieredStopAtLevel=1"
