"""Apache Pulsar standalone on loopback: broker, bookie and RocksDB metadata store in one JVM.

The configuration keys are those of Pulsar's broker.conf / standalone.conf (ServiceConfiguration) and
bookkeeper.conf; everything not set takes Pulsar's default. After start-up the tenant and namespaces
TraceGraph's topics live in (`persistent://tg/flow/…`) are created through the admin REST API.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from jvm_process import JvmServer, port_open

MAIN_CLASS = "org.apache.pulsar.PulsarStandaloneStarter"
BROKER_PORT = 6650
WEB_PORT = 8080
BOOKIE_PORT = 3181
CLUSTER = "standalone"
TENANT = "tg"
NAMESPACES = ("flow", "request", "response", "config")

JAVA17_MODULE_OPTIONS = [  # what Pulsar's bin/pulsar passes on Java 17 (Netty, BookKeeper, metrics)
    "--add-opens", "java.base/java.io=ALL-UNNAMED",
    "--add-opens", "java.base/java.nio=ALL-UNNAMED",
    "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens", "java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens", "java.management/sun.management=ALL-UNNAMED",
    "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens", "java.base/java.lang=ALL-UNNAMED",
    "--add-opens", "java.base/java.util=ALL-UNNAMED",
    "--add-opens", "java.base/java.util.zip=ALL-UNNAMED",
    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
]


def standalone_conf(web_port: int = WEB_PORT, broker_port: int = BROKER_PORT) -> str:
    """Broker and bookie settings for one machine: one copy of every entry, nothing on other interfaces."""
    return f"""\
clusterName={CLUSTER}
bindAddress=127.0.0.1
advertisedAddress=127.0.0.1
brokerServicePort={broker_port}
webServicePort={web_port}
authenticationEnabled=false
authorizationEnabled=false
allowAutoTopicCreation=true
allowAutoTopicCreationType=non-partitioned
brokerDeleteInactiveTopicsEnabled=true
functionsWorkerEnabled=false
transactionCoordinatorEnabled=false
managedLedgerDefaultEnsembleSize=1
managedLedgerDefaultWriteQuorum=1
managedLedgerDefaultAckQuorum=1
managedLedgerCacheSizeMB=64
numIOThreads=2
numHttpServerThreads=4
webSocketServiceEnabled=false
# bookie
journalSyncData=false
dbStorage_writeCacheMaxSizeMb=32
dbStorage_readAheadCacheMaxSizeMb=32
dbStorage_rocksDB_blockCacheSize=16777216
"""


LOG4J2 = """\
status = error
appender.console.type = Console
appender.console.name = console
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss.SSS} %-5level [%t] %c{1} %msg%n
rootLogger.level = info
rootLogger.appenderRef.console.ref = console
"""


def admin_url(web_port: int = WEB_PORT) -> str:
    return f"http://127.0.0.1:{web_port}"


def _admin(method: str, url: str, body: object | None = None) -> int:
    """HTTP status of one admin call (409 Conflict means it already existed)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def broker_ready(web_port: int = WEB_PORT, broker_port: int = BROKER_PORT) -> bool:
    """The admin API lists our cluster and the binary port accepts connections."""
    return (port_open("127.0.0.1", broker_port)
            and _admin("GET", f"{admin_url(web_port)}/admin/v2/clusters/{CLUSTER}") == 200)


def create_tenant(web_port: int = WEB_PORT) -> None:
    """Tenant `tg` with namespaces flow, request, response and config (existing ones are kept)."""
    base = f"{admin_url(web_port)}/admin/v2"
    status = _admin("PUT", f"{base}/tenants/{TENANT}", {"adminRoles": [], "allowedClusters": [CLUSTER]})
    if status not in (204, 409):
        raise RuntimeError(f"Pulsar refused to create tenant {TENANT}: HTTP {status}")
    for namespace in NAMESPACES:
        status = _admin("PUT", f"{base}/namespaces/{TENANT}/{namespace}")
        if status not in (204, 409):
            raise RuntimeError(f"Pulsar refused to create namespace {TENANT}/{namespace}: HTTP {status}")


def pulsar_server(data: Path, heap_mb: int = 512, web_port: int = WEB_PORT,
                  broker_port: int = BROKER_PORT) -> JvmServer:
    """The standalone JVM, with its configuration written under `data`."""
    data.mkdir(parents=True, exist_ok=True)
    (data / "standalone.conf").write_text(standalone_conf(web_port, broker_port))
    (data / "log4j2.properties").write_text(LOG4J2)
    options = [
        f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m", "-XX:MaxDirectMemorySize=256m", "-XX:+UseG1GC",
        "-XX:+ExitOnOutOfMemoryError", *JAVA17_MODULE_OPTIONS,
        f"-Dlog4j.configurationFile={data / 'log4j2.properties'}",
        "-Dpulsar.allocator.exit_on_oom=true",
    ]
    arguments = [
        "--config", str(data / "standalone.conf"),
        "--no-functions-worker", "--no-stream-storage",
        "--metadata-dir", str(data / "metadata"),
        "--bookkeeper-dir", str(data / "bookkeeper"),
        "--bookkeeper-port", str(BOOKIE_PORT),
        "--advertised-address", "127.0.0.1",
    ]
    return JvmServer("pulsar", MAIN_CLASS, options, arguments,
                     ready=lambda: broker_ready(web_port, broker_port))
