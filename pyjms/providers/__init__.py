"""Providers as plug-ins (pyjms.api.provider): each package registers its plug-in when imported.

* pyjms.providers.activemq: ActiveMQ Classic, the default provider (its embedded broker serves
  factories with no URL), with the admin service, the subscriber addresses of delayed
  publications and the ActiveMQ dead-letter details;
* pyjms.providers.amqp: AMQP 1.0 peers through Qpid JMS (amqp:// URLs);
* pyjms.providers.artemis: Apache Artemis through its own client (provider="artemis",
  artemis+tcp://, vm://N), and an embedded Artemis broker with pyjms's services.
"""
