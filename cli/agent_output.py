"""What `tg-invoke-agent` prints of the agent's messages: its steps (with `--verbose`) and its answer.
An offline agent's answer is often the last tool's answer word for word; printing that observation and
then the answer would show the same text twice, so such an observation is named, not repeated."""

from __future__ import annotations

from collections.abc import Callable

STEP_LABELS = {"thought": "Thought", "action": "Action", "observation": "Observation"}
REPEATED_OBSERVATION = "Observation: (the tool's answer, given in full as the answer below)"


class AgentOutput:
    """Prints steps and answer chunks in order. The last observation is held back until the next message
    shows whether the answer repeats it; answer chunks are held only while they still match it."""

    def __init__(self, verbose: bool, write: Callable[[str], None]) -> None:
        self.verbose, self.write = verbose, write
        self.observation: str | None = None  # held back: the answer may repeat it
        self.answer = ""  # answer text held back while it matches the held observation
        self.answering = False  # an answer has been started and not yet ended

    def step(self, kind: str, content: str) -> None:
        """A thought, action or observation (printed only when verbose)."""
        if not self.verbose:
            return
        self._release_observation()
        if kind == "observation":
            self.observation = content
        else:
            self.write(f"{STEP_LABELS[kind]}: {content}\n")

    def answer_chunk(self, content: str, end: bool) -> None:
        """A piece of the answer; `end` closes the answer message."""
        if content:
            self.answering = True
            if self.observation is not None and self.observation.strip().startswith((self.answer + content).strip()):
                self.answer += content
            else:
                self._release_observation()
                self.write(content)
        if end and self.answering:
            if self.observation is not None and self.answer.strip() == self.observation.strip():
                self.write(REPEATED_OBSERVATION + "\n" + self.answer)
                self.observation, self.answer = None, ""
            self._release_observation()  # an answer that only began like the observation
            self.write("\n")
            self.answering = False

    def finish(self) -> None:
        """The dialog ended: print what is still held, and close an unterminated answer."""
        self._release_observation()
        if self.answering:
            self.write("\n")
            self.answering = False

    def _release_observation(self) -> None:
        if self.observation is not None:
            self.write(f"Observation: {self.observation}\n")
            self.observation = None
        if self.answer:
            self.write(self.answer)
            self.answer = ""
