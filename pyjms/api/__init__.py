"""The JMS 2.0 simplified API in snake_case: the JMS client layer.

It imports nothing from the layers above it (features, providers, entry points). They plug
in through its public extension points:

* pyjms.api.policy: send policies, a chain per ConnectionFactory that every producer send
  goes through (pyjms.rules and pyjms.delay install theirs);
* pyjms.api.observers: consumer observers, told of what every receive returns and wrapping
  every listener delivery (pyjms.otel's receive and process spans);
* pyjms.api.synchronization: transaction synchronizations on a JMSContext (pyjms.browse's
  gets by token use one);
* pyjms.api.provider: provider plug-ins the client asks for provider quirks
  (pyjms.providers.activemq registers one);
* pyjms.api.extension: client methods a feature carries out (create_marking_browser,
  receive_by_token, receive_by_tokens: pyjms.browse);
* pyjms.api.forward and JMSContext.send_routed: forwarding a message unchanged, and routed
  batch sends, for the components that move messages in bulk;
* pyjms.api.bulk: the bulk API those components use instead of the wire's records and the
  shim's Java classes (routed entries, bulk receive, the delay processor's filing and moving
  in the JVM, Spark's columnar reads); pyjms.api.property_types names the JMS types of
  properties and bodies.
"""
