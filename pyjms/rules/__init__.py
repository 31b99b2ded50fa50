"""IBM MQ and JMS rules, each implemented once and used by every pyjms entry point."""
