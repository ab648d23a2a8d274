"""One Apache Cassandra node on loopback: its cassandra.yaml, logging and JVM options, written here.

The settings follow Cassandra 5.0's documented cassandra.yaml and conf/jvm17-server.options; everything
not set takes Cassandra's default. Data, commit log, hints and caches live under one folder.
"""

from __future__ import annotations

from pathlib import Path

from jvm_process import JvmServer, port_open

MAIN_CLASS = "org.apache.cassandra.service.CassandraDaemon"
NATIVE_PORT = 9042
STORAGE_PORT = 7010  # not 7000: keeps clear of a locally installed Cassandra's gossip port

# Cassandra 5.0's own conf/jvm17-server.options (module access its code needs on Java 17).
JAVA17_MODULE_OPTIONS = [
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports", "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports", "java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports", "java.sql/java.sql=ALL-UNNAMED",
    "--add-exports", "java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports", "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports", "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports", "jdk.attach/sun.tools.attach=ALL-UNNAMED",
    *(arg for module in ("java.base/java.lang.module", "java.base/jdk.internal.loader",
                         "java.base/jdk.internal.ref", "java.base/jdk.internal.reflect",
                         "java.base/jdk.internal.math", "java.base/jdk.internal.module",
                         "java.base/jdk.internal.util.jar", "jdk.management/com.sun.management.internal",
                         "java.base/sun.nio.ch", "java.base/java.io", "java.base/java.lang.reflect",
                         "jdk.compiler/com.sun.tools.javac", "java.base/java.lang", "java.base/java.util")
      for arg in ("--add-opens", f"{module}=ALL-UNNAMED")),
    "-Dio.netty.tryReflectionSetAccessible=true",
]


def cassandra_yaml(data: Path, native_port: int = NATIVE_PORT, storage_port: int = STORAGE_PORT) -> str:
    """A single-node cluster on 127.0.0.1 that keeps everything under `data`."""
    return f"""\
cluster_name: tracegraph-test
num_tokens: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
authenticator: AllowAllAuthenticator
authorizer: AllowAllAuthorizer
data_file_directories:
  - {data / "data"}
commitlog_directory: {data / "commitlog"}
saved_caches_directory: {data / "saved_caches"}
hints_directory: {data / "hints"}
cdc_raw_directory: {data / "cdc_raw"}
commitlog_sync: periodic
commitlog_sync_period: 10000ms
commitlog_segment_size: 8MiB
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1:{storage_port}"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: {storage_port}
native_transport_port: {native_port}
start_native_transport: true
endpoint_snitch: SimpleSnitch
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
memtable_heap_space: 64MiB
memtable_offheap_space: 64MiB
key_cache_size: 8MiB
dynamic_snitch: false
"""


LOGBACK = """\
<configuration>
  <appender name="STDOUT" class="ch.qos.logback.core.ConsoleAppender">
    <encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{20} %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="STDOUT"/></root>
</configuration>
"""


def cassandra_server(data: Path, heap_mb: int = 768, native_port: int = NATIVE_PORT) -> JvmServer:
    """The node's JVM, with its configuration written under `data`."""
    data.mkdir(parents=True, exist_ok=True)
    (data / "cassandra.yaml").write_text(cassandra_yaml(data, native_port))
    (data / "logback.xml").write_text(LOGBACK)
    options = [
        f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m", "-Xss256k", "-XX:+UseG1GC", "-XX:MaxDirectMemorySize=256m", "-XX:+ExitOnOutOfMemoryError",
        *JAVA17_MODULE_OPTIONS,
        f"-Dcassandra.config=file://{data / 'cassandra.yaml'}",
        f"-Dlogback.configurationFile={data / 'logback.xml'}",
        f"-Dcassandra.storagedir={data}",
        f"-Dcassandra.logdir={data / 'logs'}",
        "-Dcassandra-foreground=yes",
        # One node with no peers: nothing to wait for in gossip or the ring.
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        "-Dcassandra.ring_delay_ms=100",
        "-Dcassandra.initial_token=0",
    ]
    return JvmServer("cassandra", MAIN_CLASS, options, ready=lambda: port_open("127.0.0.1", native_port))
