"""The JMS 2.0 simplified API in snake_case."""
