"""Pure-Python rules, codec and set-up errors (in addition to, never instead of, broker tests).
What runs Maven or javac (each a JVM) is in tests/integration/test_setup.py."""

from __future__ import annotations

from datetime import timedelta

import pytest

import pyjms
from pyjms.bridge import classpath, maven, shimbuild
from pyjms.bridge import codec as C
from pyjms.rules import delivery, expiry
from pyjms.rules.reasons import MQEI_UNLIMITED, MQRC


def test_e01_ttl_in_ms_and_mq_tenths():
    assert expiry.tenths_to_ms(MQEI_UNLIMITED) == 0
    assert expiry.tenths_to_ms(50) == 5000
    assert delivery.check_time_to_live(timedelta(seconds=2)) == 2000


def test_e02_e05_remaining_expiry_counts_down_in_tenths():
    assert expiry.remaining_expiry(0) == MQEI_UNLIMITED
    assert expiry.remaining_expiry(10_000, at_ms=5_000) == 50
    assert expiry.remaining_expiry(10_000, at_ms=9_999) == 1  # never 0 while deliverable
    assert expiry.remaining_expiry(10_000, at_ms=9_950) == 1
    assert expiry.remaining_expiry(10_000, at_ms=9_899) == 2
    assert expiry.is_expired(10_000, at_ms=10_000) and not expiry.is_expired(0)


def test_e17_initial_lifetime_is_unlimited():
    assert pyjms.DEFAULT_TIME_TO_LIVE == 0
    assert pyjms.TextMessage("x").get_remaining_expiry() == MQEI_UNLIMITED


def test_d06_delay_longer_than_ttl_is_expiry_error():
    delivery.check_delay_within_ttl(5000, 5000)
    delivery.check_delay_within_ttl(5000, 0)  # 0 = unlimited
    delivery.check_delay_within_ttl(0, 10)
    with pytest.raises(pyjms.JMSRuntimeException) as e:
        delivery.check_delay_within_ttl(5001, 5000)
    assert e.value.reason == MQRC.EXPIRY_ERROR
    assert e.value.values == {"delivery_delay": 5001, "time_to_live": 5000}


def test_negative_delay_is_refused():
    with pytest.raises(pyjms.InvalidArgumentRuntimeException) as e:
        delivery.check_delivery_delay(-1)
    assert e.value.reason == MQRC.EXPIRY_ERROR


def test_errors_are_one_tree_with_reason_fields():
    for name in pyjms.errors.__all__[:-1]:
        cls = getattr(pyjms, name)
        assert issubclass(cls, pyjms.JMSRuntimeException)
    e = pyjms.JMSRuntimeException("x", error_code="E1", reason=2053)
    assert (e.error_code, e.reason, e.reason_name) == ("E1", 2053, "MQRC_Q_FULL")
    assert pyjms.JMSRuntimeException("y").reason_name is None


def test_codec_outgoing_record_layout():
    props = C.pack_properties({"a": (C.T_INT, 5), "s": (C.T_STRING, "é")})
    rec = C.pack_record(C.KIND_TEXT, "hi", C.pack_headers("c", None, "queue://R"), props)
    assert rec[0] == C.KIND_TEXT and rec[1] == C.FLAG_HEADERS | C.FLAG_PROPERTIES
    pos = 2
    corr, pos = C.read_string(rec, pos)
    typ, pos = C.read_string(rec, pos)
    reply, pos = C.read_string(rec, pos)
    assert (corr, typ, reply) == ("c", None, "queue://R")
    decoded, pos = C.read_tagged_map(rec, pos)
    assert decoded == {"a": (C.T_INT, 5), "s": (C.T_STRING, "é")}
    assert C.read_string(rec, pos) == ("hi", len(rec))


def test_codec_values_round_trip():
    for tag, value in [
        (C.T_BOOL, True),
        (C.T_BYTE, -3),
        (C.T_SHORT, 999),
        (C.T_INT, -(2**31)),
        (C.T_LONG, 2**62),
        (C.T_FLOAT, 0.25),
        (C.T_DOUBLE, 1e300),
        (C.T_STRING, "x"),
        (C.T_BYTES, b"\x00\x01"),
        (C.T_CHAR, "Z"),
    ]:
        packed = C.pack_value(tag, value)
        assert C.read_value(packed, 0) == (tag, value, len(packed))


def test_pyjms_classpath_replaces_resolution(tmp_path, monkeypatch):
    mine = tmp_path / "mine.jar"
    mine.write_bytes(b"")
    envdir = tmp_path / "env"
    envdir.mkdir()
    (envdir / "b.jar").write_bytes(b"")
    monkeypatch.setenv("PYJMS_CLASSPATH", str(envdir))
    # air-gapped: named jars, then PYJMS_CLASSPATH, and nothing resolved from Maven
    assert classpath.resolve([str(mine)]) == [str(mine), str(envdir / "b.jar")]


def test_a_provider_not_downloaded_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("PYJMS_CACHE_DIR", str(tmp_path))
    with pytest.raises(pyjms.SetupError, match="providers fetch ibmmq"):
        classpath.provider_jars("ibmmq", fetch=False)
    with pytest.raises(pyjms.SetupError, match="unknown provider 'kafka'"):
        classpath.provider_jars("kafka")


def test_merge_keeps_the_newest_of_each_artifact():
    repo = "/r/io/netty/netty-common"
    merged = maven.merge(
        [f"{repo}/4.1.9.Final/netty-common-4.1.9.Final.jar", "/r/a/x/1.0/x-1.0.jar"],
        [f"{repo}/4.1.135.Final/netty-common-4.1.135.Final.jar", "/r/a/x/1.0/x-1.0-linux.jar"],
    )
    assert merged == [
        f"{repo}/4.1.135.Final/netty-common-4.1.135.Final.jar",
        "/r/a/x/1.0/x-1.0.jar",
        "/r/a/x/1.0/x-1.0-linux.jar",
    ]


def test_missing_jar_is_a_setup_error(monkeypatch):
    monkeypatch.setenv("PYJMS_CLASSPATH", "/nonexistent/provider.jar")
    with pytest.raises(pyjms.SetupError, match="/nonexistent/provider.jar"):
        classpath.resolve()


def test_missing_jdk_says_what_to_install(monkeypatch):
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(shimbuild.ShimBuildError, match="openjdk-17-jdk-headless"):
        shimbuild.jdk_tool("javac")
