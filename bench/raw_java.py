"""What every bench shares: a standalone broker per provider, and the raw Java baseline.

The baseline is the provider's own JMS client used directly from Java (bench/RawJms.java), in
ONE JVM per provider that stays up for the whole bench and takes a round per command on stdin,
so its JIT warms up as pyjms's own JVM does: a new JVM per round (`java File.java` each time)
has a cold JIT, which flattered pyjms by about 1.75x. It starts with the JVM options pyjms's
JVM gets (pyjms.bridge.jvm.start), PYJMS_JVM_OPTIONS included, and every bench gives it the
same untimed warm-up rounds as the pyjms side, and the client options pyjms's own client is
made with (client_url).

    raw = RawJava(PROVIDERS["activemq"], url)
    seconds = raw.run("send", "Q", 50_000, 100, "non-persistent")   # see RawJms.java's commands
    raw.close()
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pyjms  # noqa: E402
from pyjms.bridge import classpath  # noqa: E402

LOG_CONFIG = ROOT / "pyjms" / "bridge" / "log4j2.properties"
RAW_JMS = ROOT / "bench" / "RawJms.java"


@dataclass(frozen=True)
class Provider:
    """How to run a broker for a provider and reach it, from pyjms and from raw Java."""

    name: str
    broker_args: tuple[str, ...]  # for `pyjms broker`
    scheme: str  # which URL of the broker's ready line to use
    jars: str  # whose jars raw Java runs with (bridge.classpath provider name)
    factory_class: str  # the provider's own JMS connection factory, for raw Java
    pyjms_options: tuple[tuple[str, str], ...] = ()  # extra ConnectionFactory arguments


PROVIDERS = {
    "activemq": Provider(
        "activemq", (), "tcp://", "activemq", "org.apache.activemq.ActiveMQConnectionFactory"
    ),
    "artemis": Provider(
        "artemis",
        ("--provider", "artemis"),
        "artemis+tcp://",
        "artemis",
        "org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory",
    ),
    # Qpid JMS against the pyjms ActiveMQ broker's AMQP connector, and against Artemis's
    "amqp": Provider("amqp", (), "amqp://", "amqp", "org.apache.qpid.jms.JmsConnectionFactory"),
    "amqp-artemis": Provider(
        "amqp-artemis",
        ("--provider", "artemis"),
        "amqp://",
        "amqp",
        "org.apache.qpid.jms.JmsConnectionFactory",
    ),
}


def listed(option: str, value: str, allowed: Iterable[str]) -> list[str]:
    """A comma-separated option's items, each one of ``allowed``; otherwise the bench ends with
    one line naming the items that are not, and the choices."""
    choices = list(allowed)
    items = value.split(",")
    unknown = [item for item in items if item not in choices]
    if unknown:
        raise SystemExit(f"{option} {','.join(unknown)}: each must be one of {', '.join(choices)}")
    return items


def start_broker(p: Provider, data_dir: str | None = None) -> tuple[subprocess.Popen[str], str]:
    """A `pyjms broker` process on its defaults (persistent in ``data_dir`` when given) and its
    URL for ``p``; terminate() and wait() it when done."""
    data = ("--data", data_dir) if data_dir is not None else ()
    proc = subprocess.Popen(
        [sys.executable, "-m", "pyjms", "broker", "--port", "0", *p.broker_args, *data],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "ready:" not in line:
        proc.kill()
        raise RuntimeError(f"broker did not start: {line!r}")
    urls = line.split("ready:")[1].split()
    url = next((u for u in urls if u.startswith(p.scheme)), None)
    if url is None:
        proc.terminate()
        raise RuntimeError(f"the broker serves no {p.scheme} URL: {urls}")
    return proc, url


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system, every thread) a process has used so far: Linux's
    /proc/PID/stat. A figure per message that holds steadier than a rate on a shared machine."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


#: the heading of a bench's CPU-per-message table (cpu_meter's figures)
CPU_HEADING = "CPU per message, medians: the client's process (pyjms: Python and its JVM; raw Java: its JVM) and the broker's"


def cpu_meter(client_pid: int, broker_pid: int) -> Callable[[int], tuple[float, float]]:
    """Starts counting the CPU of a client's process and of the broker's; the function it
    returns gives each one's µs per message over n messages since."""
    client_start, broker_start = process_cpu(client_pid), process_cpu(broker_pid)

    def per_message(n: int) -> tuple[float, float]:
        return (
            (process_cpu(client_pid) - client_start) * 1e6 / n,
            (process_cpu(broker_pid) - broker_start) * 1e6 / n,
        )

    return per_message


def jvm_options() -> list[str]:
    """The options pyjms.bridge.jvm.start gives pyjms's JVM, so that only the client differs."""
    return [
        f"-Dlog4j2.configurationFile={LOG_CONFIG}",
        "-Dorg.apache.activemq.SERIALIZABLE_PACKAGES=",
        "-Xshare:auto",
        "-Xrs",
        *os.environ.get("PYJMS_JVM_OPTIONS", "").split(),
    ]


def plain_url(url: str) -> str:
    """The URL as the provider's own client takes it: artemis+tcp:// is pyjms's, tcp:// Artemis's."""
    return url.split("+", 1)[-1]


def client_url(p: Provider, url: str) -> str:
    """The URL pyjms's own client is made with, so that the baseline runs the client as pyjms
    does. The shim adds options where it departs from a client's defaults: Qpid JMS on fewer
    than 4 CPUs waits on its I/O thread by spinning briefly before it parks
    (org.pyjms.shim.amqp.AmqpProvider.waitingOnFewCpus); Artemis's producers ask for credits
    1 MiB at a time, not 64 KiB (org.pyjms.shim.artemis.ArtemisProvider). (pyjms's send
    confirmation window on Artemis is not a throughput option: pyjms's own protocol makes a
    send cost what it costs without one, docs/providers.md.)"""
    if p.factory_class.startswith("org.apache.qpid.jms."):
        made = pyjms.ConnectionFactory(url)._java()[1]  # the shim's Qpid JmsConnectionFactory
        return str(made.getRemoteURI())
    plain = plain_url(url)
    if p.factory_class.startswith("org.apache.activemq.artemis."):
        made = pyjms.ConnectionFactory(url)._java()[1]  # the shim's Artemis ActiveMQConnectionFactory
        return f"{plain}{'&' if '?' in plain else '?'}producerWindowSize={int(made.getProducerWindowSize())}"
    return plain


class RawJava:
    """bench/RawJms.java in one JVM for the whole run, given one round per command."""

    def __init__(self, p: Provider, url: str, *, as_pyjms: bool = True) -> None:
        """as_pyjms: with the client options pyjms's own client is made with (client_url);
        False: with the provider client's own defaults, for comparison."""
        jars = os.pathsep.join(classpath.provider_jars(p.jars))
        self.url = client_url(p, url) if as_pyjms else plain_url(url)
        self.proc = subprocess.Popen(
            ["java", *jvm_options(), "-cp", jars, str(RAW_JMS), p.factory_class, self.url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, *command: object) -> float:
        """Seconds the command took, timed in the Java process (RawJms.java lists them)."""
        return self._ask(command)[1]

    def rate(self, *command: object) -> float:
        """Messages per second of the command."""
        n, seconds = self._ask(command)
        return n / seconds

    def _ask(self, command: tuple[object, ...]) -> tuple[int, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        line = " ".join(str(word) for word in command)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().split(maxsplit=2)
        if not reply or reply[0] != "ok":
            raise RuntimeError(f"raw Java {line!r} failed: {' '.join(reply) or 'no answer (exited?)'}")
        return int(reply[1]), float(reply[2])

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
