"""The client's checks of send and receive options (pyjms.api.checks), which provider a URL is
for (pyjms.bridge.urls), and the browse options of a marking browser (pyjms.browse.options)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from pyjms.api import checks
from pyjms.bridge import urls
from pyjms.browse import options as O
from pyjms.errors import InvalidArgumentRuntimeException
from pyjms.rules.reasons import MQRC

# ---------------------------------------------------------------------------- checks


@pytest.mark.parametrize(
    ("value", "ms"), [(0, 0), (1500, 1500), (timedelta(seconds=1.5), 1500), (timedelta(microseconds=999), 0)]
)
def test_durations_are_ints_of_ms_or_timedeltas(value: object, ms: int) -> None:
    assert checks.to_ms(value, "wait") == ms


@pytest.mark.parametrize("value", [1.0, True, "5", None, 2.5])
def test_a_duration_of_another_type_is_refused_naming_it(value: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        checks.to_ms(value, "receive timeout")
    assert e.value.values == {"receive timeout": value}


def test_a_huge_wait_is_a_wait_without_end_and_a_negative_one_is_refused() -> None:
    assert checks.check_wait_ms(2**80, "timeout") == checks.LONGEST_WAIT_MS
    assert checks.check_wait_ms(timedelta(days=1), "timeout") == 86_400_000
    with pytest.raises(InvalidArgumentRuntimeException):
        checks.check_wait_ms(-1, "timeout")


@pytest.mark.parametrize("priority", [-1, 10, 4.0, True, "4", None])
def test_a_priority_outside_0_to_9_is_priority_error(priority: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        checks.check_priority(priority)
    assert e.value.reason == MQRC.PRIORITY_ERROR


def test_every_jms_priority_and_delivery_mode_passes() -> None:
    assert [checks.check_priority(p) for p in range(10)] == list(range(10))
    assert checks.check_delivery_mode(1) == 1 and checks.check_delivery_mode(2) == 2


@pytest.mark.parametrize("mode", [0, 3, True, 2.0, "PERSISTENT"])
def test_another_delivery_mode_is_persistence_error(mode: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        checks.check_delivery_mode(mode)
    assert e.value.reason == MQRC.PERSISTENCE_ERROR


def test_booleans_and_counts_are_strict() -> None:
    assert checks.check_bool(False, "x") is False
    for value in (0, 1, "yes", None):
        with pytest.raises(InvalidArgumentRuntimeException):
            checks.check_bool(value, "x")
    assert checks.check_positive_int(1, "n") == 1
    for value in (0, -1, True, 2.0):
        with pytest.raises(InvalidArgumentRuntimeException):
            checks.check_positive_int(value, "n")


def test_epoch_times_fit_a_java_long() -> None:
    assert checks.check_epoch_ms(-(2**63), "t") == -(2**63)
    assert checks.check_epoch_ms(2**63 - 1, "t") == 2**63 - 1
    for value in (2**63, 1.0, None):
        with pytest.raises(InvalidArgumentRuntimeException):
            checks.check_epoch_ms(value, "t")


@pytest.mark.parametrize("check", [checks.check_time_to_live, checks.check_delivery_delay])
def test_a_ttl_or_delay_whose_end_would_overflow_a_long_is_expiry_error(check) -> None:
    assert check(checks.MAX_DURATION_MS) == checks.MAX_DURATION_MS
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        check(checks.MAX_DURATION_MS + 1)
    assert e.value.reason == MQRC.EXPIRY_ERROR
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        check(-1)
    assert e.value.reason == MQRC.EXPIRY_ERROR
    assert check(timedelta(minutes=1)) == 60_000


def test_is_int_means_a_jms_int() -> None:
    assert checks.is_int(0) and checks.is_int(-(2**70))
    assert not any(checks.is_int(v) for v in (True, 2.0, "2", None))


# ---------------------------------------------------------------------------- URLs


@pytest.mark.parametrize(
    ("address", "provider", "client_url"),
    [
        ("tcp://h:61616", "activemq", "tcp://h:61616"),
        ("vm://pyjms-1", "activemq", "vm://pyjms-1"),
        ("failover:(tcp://a:1,tcp://b:2)", "activemq", "failover:(tcp://a:1,tcp://b:2)"),
        ("ssl://h:1", "activemq", "ssl://h:1"),
        ("vm://0", "artemis", "vm://0"),
        ("vm://3?x=1", "artemis", "vm://3?x=1"),
        ("artemis+tcp://h:61616", "artemis", "tcp://h:61616"),
        ("ARTEMIS+tcp://h:1", "artemis", "tcp://h:1"),
        ("activemq+tcp://h:1", "activemq", "tcp://h:1"),
        ("artemis+ssl://h:1", "artemis", "tcp://h:1?sslEnabled=true"),
        ("artemis+ssl://h:1?trustStorePath=/t", "artemis", "tcp://h:1?trustStorePath=/t&sslEnabled=true"),
        ("amqp://h:5672", "amqp", "amqp://h:5672"),
        ("amqps://h:5671", "amqp", "amqps://h:5671"),
        ("amqp+amqps://h:5671", "amqp", "amqps://h:5671"),
    ],
)
def test_a_url_names_its_provider_and_the_url_its_client_gets(
    address: str, provider: str, client_url: str
) -> None:
    assert urls.choose(address) == (provider, client_url)


def test_a_named_provider_takes_any_url_but_must_agree_with_a_prefix() -> None:
    assert urls.choose("tcp://h:1", "artemis") == ("artemis", "tcp://h:1")
    assert urls.choose("artemis+tcp://h:1", "artemis") == ("artemis", "tcp://h:1")
    with pytest.raises(InvalidArgumentRuntimeException, match="for the artemis provider"):
        urls.choose("artemis+tcp://h:1", "activemq")
    with pytest.raises(InvalidArgumentRuntimeException, match="factory_class"):
        urls.choose("tcp://h:1", "kafka")


@pytest.mark.parametrize("address", ["http://h", "h:1", "", "kafka+tcp://h:1"])
def test_a_url_no_provider_serves_is_refused_saying_what_to_write(address: str) -> None:
    with pytest.raises(InvalidArgumentRuntimeException, match="artemis\\+tcp://") as e:
        urls.choose(address)
    assert e.value.values == {"url": address}


def test_internal_options_are_kept_out_of_what_users_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(urls, "_INTERNAL_OPTIONS", set())  # this test's option goes with it
    urls.add_internal_option("pyjms.internal=1")
    shown = urls.without_internal_options(
        "tcp://a?pyjms.internal=1 and tcp://b?x=1&pyjms.internal=1 tcp://c?pyjms.internal=1&y=2"
    )
    assert shown == "tcp://a and tcp://b?x=1 tcp://c?y=2"
    assert urls.scheme("Failover:(x)") == "failover" and urls.scheme("nothing") == ""


@pytest.mark.parametrize(
    ("address", "service_url"),
    [
        (
            "failover:(tcp://a:1,tcp://b:2)?randomize=false",
            "failover:(tcp://a:1,tcp://b:2)?randomize=false&maxReconnectAttempts=0",
        ),
        ("failover:(tcp://a:1?x=1)", "failover:(tcp://a:1?x=1)?maxReconnectAttempts=0"),
        ("failover:(tcp://a:1)?maxReconnectAttempts=5", "failover:(tcp://a:1)?maxReconnectAttempts=5"),
        ("tcp://a:1", "tcp://a:1"),
    ],
)
def test_a_service_over_activemq_failover_does_not_reconnect(address: str, service_url: str) -> None:
    """A pyjms service's connection ends with its broker (its leadership and transactions went
    with it: pyjms.api.leadership), unless the URL sets maxReconnectAttempts itself."""
    import pyjms

    factory = pyjms.ConnectionFactory(address)
    assert factory.provider.service_factory(factory).url == service_url


@pytest.mark.parametrize(
    ("address", "replace", "result"),
    [
        ("tcp://a:1", True, "tcp://a:1?o=1"),
        ("tcp://a:1?x=2", True, "tcp://a:1?x=2&o=1"),
        ("tcp://a:1?O=5&x=2", True, "tcp://a:1?x=2&o=1"),
        ("tcp://a:1?O=5&x=2", False, "tcp://a:1?O=5&x=2"),
        # a list of brokers: the query follows the list, the brokers' own options stay
        ("failover:(tcp://a:1?x=1,tcp://b:2)", True, "failover:(tcp://a:1?x=1,tcp://b:2)?o=1"),
        ("artemis+(tcp://a:1?o=7,tcp://b:2)?ha=true", False, "artemis+(tcp://a:1?o=7,tcp://b:2)?ha=true&o=1"),
        ("artemis+(tcp://a:1,tcp://b:2)?o=7&ha=true", True, "artemis+(tcp://a:1,tcp://b:2)?ha=true&o=1"),
    ],
)
def test_url_options_go_into_the_query_of_the_whole_url(address: str, replace: bool, result: str) -> None:
    assert urls.with_options(address, {"o": "1"}, replace=replace) == result


@pytest.mark.parametrize(
    ("address", "service_url"),
    [
        (
            "artemis+(tcp://a:1?sslEnabled=false,tcp://b:2)",
            "artemis+(tcp://a:1?sslEnabled=false,tcp://b:2)"
            "?connectionTTL=2500&clientFailureCheckPeriod=500&reconnectAttempts=0&failoverAttempts=0",
        ),
        (
            "artemis+(tcp://a:1,tcp://b:2)?ha=true&reconnectAttempts=-1",
            "artemis+(tcp://a:1,tcp://b:2)"
            "?ha=true&connectionTTL=2500&clientFailureCheckPeriod=500&reconnectAttempts=0&failoverAttempts=0",
        ),
        (
            "artemis+tcp://a:1?clientFailureCheckPeriod=200",
            "artemis+tcp://a:1?clientFailureCheckPeriod=200&connectionTTL=2500",
        ),
        ("artemis+tcp://a:1?connectionTTL=9000", "artemis+tcp://a:1?connectionTTL=9000"),
    ],
)
def test_a_service_over_artemis_notices_a_dead_peer_and_ends_with_its_broker(
    address: str, service_url: str
) -> None:
    """A pyjms service's Artemis connection gets a short TTL unless the URL sets one, and over a
    list of brokers it neither reconnects nor fails over, whatever the URL asks: the options go
    after the list, not into its last broker's URL."""
    import pyjms

    factory = pyjms.ConnectionFactory(address)
    assert factory.provider.service_factory(factory).url == service_url


# ---------------------------------------------------------------------------- browse options


@pytest.mark.parametrize(
    ("options", "cooperative"),
    [
        (O.BROWSE_HANDLE, False),
        (O.BROWSE_CO_OP, True),
        (O.BROWSE_NEXT, False),
        (O.BROWSE_NEXT | O.UNMARKED_BROWSE_MSG | O.MARK_BROWSE_HANDLE, True),
    ],
)
def test_b02_b04_the_usual_combinations_pass_unchanged(options: int, cooperative: bool) -> None:
    assert O.check_get_options(options, cooperative) == options


@pytest.mark.parametrize("options", [True, 1.0, "16", None])
def test_browse_options_are_an_int_of_flags(options: object) -> None:
    with pytest.raises(InvalidArgumentRuntimeException) as e:
        O.check_get_options(options, False)  # type: ignore[arg-type]
    assert e.value.reason == MQRC.OPTIONS_ERROR


def test_unmark_takes_only_unmark_flags_and_co_op_needs_a_cooperative_browser() -> None:
    both = O.UNMARK_BROWSE_HANDLE | O.UNMARK_BROWSE_CO_OP
    assert O.check_unmark_options(both, True) == both
    assert O.check_unmark_options(O.UNMARK_BROWSE_HANDLE, False) == O.UNMARK_BROWSE_HANDLE
    for options, cooperative in (
        (0, True),
        (O.BROWSE_FIRST, True),
        (O.UNMARK_BROWSE_CO_OP, False),
        (True, True),
    ):
        with pytest.raises(InvalidArgumentRuntimeException) as e:
            O.check_unmark_options(options, cooperative)
        assert e.value.reason == MQRC.OPTIONS_ERROR


def test_b05_interval_bounds_and_the_lease_minimum() -> None:
    assert O.check_interval(-1) == -1 and O.check_interval(0) == 0
    assert O.check_interval(O.MAX_INTERVAL_MS) == 999_999_999
    assert O.DEFAULT_MSG_MARK_BROWSE_INTERVAL_MS == 5000  # IBM MQ's default
    assert O.check_lease(100) == 100
    for lease in (99, True, 100.0, None):
        with pytest.raises(InvalidArgumentRuntimeException):
            O.check_lease(lease)
