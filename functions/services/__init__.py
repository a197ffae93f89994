"""Outside services and what is kept in them: OpenAI over httpx, DynamoDB, SSM, rate limits, the token budget and feedback records; may import only the top-level modules."""
