"""The architecture processors: extraction of CODEOWNERS, ADRs, post-mortems and review comments, and the service answering ownership, dependency, memory and intent questions."""
