"""Ack coalescing on RabbitMQ: contiguous tags become one multiple-ack, stragglers never wait."""

import asyncio
from types import SimpleNamespace

from tracegraph.base.bus.rabbitmq import _Acks


class RecordingChannel:
    """Records settle frames as they are written; `stalls` ticks pass before the first is."""

    def __init__(self, stalls: int = 0):
        self.frames = []
        self.stalls = stalls

    async def _write(self, frame):
        while self.stalls:  # a full frame queue: aiormq's put waits
            self.stalls -= 1
            await asyncio.sleep(0)
        self.frames.append(frame)

    async def basic_ack(self, tag, multiple=False, wait=True):
        await self._write(("ack", tag, multiple))

    async def basic_nack(self, tag, requeue=True, wait=True):
        await self._write(("nack", tag, requeue))


def message(channel, tag):
    return SimpleNamespace(channel=channel, delivery=SimpleNamespace(delivery_tag=tag))


async def settle_round():
    for _ in range(10):  # the flush, then each write after the one before it
        await asyncio.sleep(0)


async def test_contiguous_acks_of_one_tick_become_one_multiple_ack():
    channel, acks = RecordingChannel(), _Acks()
    for tag in (2, 1, 3):
        acks.ack(message(channel, tag))
    await settle_round()
    assert channel.frames == [("ack", 3, True)]


async def test_an_ack_behind_a_gap_is_sent_at_once_and_the_gap_closes_later():
    channel, acks = RecordingChannel(), _Acks()
    acks.ack(message(channel, 1))
    acks.ack(message(channel, 3))  # 2 is still being handled
    await settle_round()
    assert channel.frames == [("ack", 1, True), ("ack", 3, False)]
    acks.ack(message(channel, 2))
    acks.ack(message(channel, 4))
    await settle_round()
    assert channel.frames[2:] == [("ack", 4, True)]  # covers 2; 3 was already settled


async def test_a_nacked_tag_is_stepped_over_but_never_acked():
    channel, acks = RecordingChannel(), _Acks()
    await acks.nack(message(channel, 1))
    acks.ack(message(channel, 2))
    await settle_round()
    assert channel.frames == [("nack", 1, True), ("ack", 2, True)]


async def test_a_new_channel_starts_counting_afresh():
    old, new, acks = RecordingChannel(), RecordingChannel(), _Acks()
    acks.ack(message(old, 5))
    acks.ack(message(new, 1))  # reconnect: tags restart on the new channel
    await settle_round()
    assert old.frames == [] and new.frames == [("ack", 1, True)]


async def test_frames_are_written_in_the_order_they_were_decided_even_when_writing_stalls():
    """A multiple-ack written before the single ack of a tag it covers would close the channel."""
    channel, acks = RecordingChannel(stalls=5), _Acks()
    acks.ack(message(channel, 1))
    acks.ack(message(channel, 3))
    await asyncio.sleep(0)  # flushed: ack 1 (multiple) and ack 3 (single), the writes stalled
    acks.ack(message(channel, 2))
    acks.ack(message(channel, 4))
    await asyncio.sleep(0)  # flushed: ack 4 (multiple, covering 2 and 3)
    nack = asyncio.ensure_future(acks.nack(message(channel, 5)))
    for _ in range(20):
        await asyncio.sleep(0)
    assert nack.done()
    assert channel.frames == [("ack", 1, True), ("ack", 3, False), ("ack", 4, True), ("nack", 5, True)]
