"""The agents' doors (agents/): the JSON API, MCP, the operations both call."""
