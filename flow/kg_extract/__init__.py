"""Knowledge extraction: facts and entity definitions from chunks, by LLM or offline heuristics."""
