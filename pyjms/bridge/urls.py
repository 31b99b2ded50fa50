"""Which provider's client a URL is for: decided here, once, before the JVM starts.

ActiveMQ Classic and Apache Artemis both write ``tcp://host:port``, and a client of one cannot
talk to the other, so pyjms never guesses between them from the address alone:

* ``provider="artemis"`` (or ``"activemq"``) on the ConnectionFactory says it outright;
* or the URL does: ``artemis+tcp://host:port`` is Artemis's ``tcp://host:port``, and
  ``activemq+tcp://…`` ActiveMQ's (the ``NAME+`` prefix, as in ``git+ssh://``, is dropped before
  the client sees the URL). This is the form ``pyjms broker --provider artemis`` prints;
* ``artemis+ssl://host:port?trustStorePath=…&trustStorePassword=…`` is Artemis over TLS: its
  client gets ``tcp://host:port?sslEnabled=true&…`` (Artemis's own TLS options, any of them);
* ``artemis+(tcp://host:A,tcp://host:B)?…`` is Artemis's own URL of several brokers (a failover
  pair of ``pyjms broker --provider artemis --shared-store``; docs/reliability.md);
* ``vm://N`` with N a number is an Artemis broker in this process (Artemis numbers its in-vm
  acceptors; the ActiveMQ brokers pyjms starts are named ``vm://pyjms-…``);
* ``amqp://`` and ``amqps://`` are AMQP 1.0 (Qpid JMS);
* any other ActiveMQ scheme (``tcp://``, ``vm://name``, ``failover:(…)``, ``ssl://``…) is
  ActiveMQ Classic, as it always was in pyjms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pyjms.errors import InvalidArgumentRuntimeException

ACTIVEMQ, ARTEMIS, AMQP = "activemq", "artemis", "amqp"
#: the providers a URL or ``provider=`` may name (IBM MQ has no URL: use its factory class)
NAMED = (ACTIVEMQ, ARTEMIS, AMQP)
ACTIVEMQ_SCHEMES = ("vm", "tcp", "nio", "ssl", "failover", "discovery", "static", "auto", "peer")
AMQP_SCHEMES = ("amqp", "amqps", "amqpws", "amqpwss")
#: NAME+ before a URL (scheme:...), or before Artemis's list of URLs ((tcp://a,tcp://b)?...)
_PREFIXED = re.compile(r"^(?P<provider>[a-z]+)\+(?P<url>(?:[a-z][a-z0-9.+-]*:|\().*)$", re.IGNORECASE)
_ARTEMIS_IN_VM = re.compile(r"^vm://\d+(\?.*)?$")


def scheme(url: str) -> str:
    return url.split(":", 1)[0].lower() if ":" in url else ""


def choose(url: str, provider: str | None = None) -> tuple[str, str]:
    """(provider name, the URL its client is given) for a ConnectionFactory's url and provider."""
    if provider is not None and provider not in NAMED:
        raise InvalidArgumentRuntimeException(
            f"provider {provider!r} is not one of {', '.join(NAMED)} (another provider: pass factory_class=)",
            values={"provider": provider},
        )
    prefixed = _PREFIXED.match(url)
    if prefixed and prefixed["provider"].lower() in NAMED:
        named, url = prefixed["provider"].lower(), prefixed["url"]
        if provider is not None and provider != named:
            raise InvalidArgumentRuntimeException(
                f"URL {named}+{url} is for the {named} provider, but provider={provider!r} was given",
                values={"provider": provider},
            )
        if named == ARTEMIS and scheme(url) == "ssl":
            return named, artemis_tls(url)
        return named, url
    if provider is not None:
        return provider, url
    s = scheme(url)
    if s in AMQP_SCHEMES:
        return AMQP, url
    if _ARTEMIS_IN_VM.match(url):
        return ARTEMIS, url
    if s in ACTIVEMQ_SCHEMES:
        return ACTIVEMQ, url
    raise InvalidArgumentRuntimeException(
        f"no provider for URL {url!r}: use an ActiveMQ URL (tcp://, vm://NAME, failover:(...)), "
        f"artemis+tcp://HOST:PORT or provider='artemis' for Apache Artemis, amqp:// for AMQP 1.0, "
        "or name the provider's factory class (factory_class=)",
        values={"url": url},
    )


def artemis_tls(url: str) -> str:
    """Artemis's client URL for ``ssl://host:port[?options]``: its tcp:// with sslEnabled=true."""
    return with_options("tcp://" + url.split("://", 1)[1], {"sslEnabled": "true"})


def with_options(url: str, options: Mapping[str, str], *, replace: bool = True) -> str:
    """``url`` with these query options: set (an option of the same name, in any case, is
    replaced) or, with ``replace=False``, added where the URL does not set them already. In a
    URL that lists brokers in parentheses (``failover:(a,b)?o=1``, ``artemis+(a,b)?ha=true``)
    the query is what follows the list, and the brokers' own options stay as they are."""
    head, paren, tail = url.rpartition(")")
    base, _, query = tail.partition("?")
    given = [o for o in query.split("&") if o]
    if replace:
        wanted = {k.lower() for k in options}
        given = [o for o in given if o.partition("=")[0].lower() not in wanted]
        added = [f"{k}={v}" for k, v in options.items()]
    else:
        names = {o.partition("=")[0].lower() for o in given}
        added = [f"{k}={v}" for k, v in options.items() if k.lower() not in names]
    query = "&".join(given + added)
    return head + paren + base + ("?" + query if query else "")


#: URL options pyjms adds for its own components (e.g. the DLQ handler's redelivery limit):
#: never shown in messages, which name the URL the user gave
_INTERNAL_OPTIONS: set[str] = set()


def add_internal_option(option: str) -> None:
    """Registers a ``name=value`` URL option pyjms adds itself, to keep it out of messages."""
    _INTERNAL_OPTIONS.add(option)


def without_internal_options(text: str) -> str:
    """``text`` with pyjms's own URL options taken out of every URL in it."""
    for option in _INTERNAL_OPTIONS:
        if option in text:
            text = text.replace("&" + option, "").replace("?" + option + "&", "?").replace("?" + option, "")
    return text
