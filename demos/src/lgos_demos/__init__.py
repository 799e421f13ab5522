"""Demo graphs and the demo API of LangGraph OpenAI Serve."""
