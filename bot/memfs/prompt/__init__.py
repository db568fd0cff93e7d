"""Memory compiled into the agent's system prompt (`compile`), cached per HEAD (`compiler`)."""
