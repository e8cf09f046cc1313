"""The fleet store in Redis, for loops on several machines (`fleet.store: redis://...`).

Every change to the limits is one Lua script, which Redis runs atomically: N loops asking at once never get more
than the window's calls in any rolling hour, and a budget spent stops every loop's next call. The keys, under
`dun:fleet:`:

    epoch                 a random id, made when missing: a changed epoch tells a loop the store lost its data
    agents                the agents with limits here (a set)
    agent:NAME:calls      the granted calls of the rolling hour (a sorted set: member -> time)
    agent:NAME:costs      the costs of the last 24 hours ("USD|member" -> time)
    agent:NAME:pause      the usage-limit pause (until, reason)
    agent:NAME:clock      the latest time seen: a slow clock on one machine cannot reopen a window
    loops                 the registry: loop id -> its record (JSON)

Any failure to reach the server is StoreUnavailable: the loop decides what to do (dun/fleet/link.py).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from typing import TypeVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from dun.core.ratewindow import WINDOW_S
from dun.fleet.store import DAY_S, FORGET_AFTER_S, FleetStore, Limits, Reservation, StoreUnavailable, public_url

PREFIX = "dun:fleet:"
T = TypeVar("T")

# Shared by the scripts: the time of this request, never earlier than the latest time already seen. Numbers go to
# Redis formatted by `f` (Lua's own conversion keeps 14 digits, too few for an epoch time in microseconds).
_CLOCK = """
local function f(x) return string.format('%.6f', x) end
local now = tonumber(ARGV[1])
local high = tonumber(redis.call('GET', KEYS[4]) or '0')
if high > now then now = high end
redis.call('SET', KEYS[4], f(now))
"""

# KEYS: calls, costs, pause, clock, epoch, agents; ARGV: now, limit, budget, member, known epoch, new epoch, window,
# day, agent
RESERVE = """
local epoch = redis.call('GET', KEYS[5])
if not epoch then
  epoch = ARGV[6]
  redis.call('SET', KEYS[5], epoch)
end
if ARGV[5] ~= '' and epoch ~= ARGV[5] then return {'stale', epoch} end
redis.call('SADD', KEYS[6], ARGV[9])
""" + _CLOCK + """
local pause = tonumber(redis.call('HGET', KEYS[3], 'until') or '0')
if pause > now then return {'pause', f(pause - now)} end
local budget = tonumber(ARGV[3])
if budget > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', f(now - tonumber(ARGV[8])))
  local spent = 0
  for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    spent = spent + tonumber(string.match(m, '^[^|]+'))
  end
  if math.floor(spent * 1e6 + 0.5) / 1e6 >= budget then return {'budget', '0'} end
end
local window = tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', f(now - window))
local n = redis.call('ZCARD', KEYS[1])
local limit = tonumber(ARGV[2])
if n < limit then
  redis.call('ZADD', KEYS[1], f(now), ARGV[4])
  return {'granted', f(now)}
end
local edge = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
local wait = tonumber(edge[2]) + window - now
if wait < 0 then wait = 0 end
return {'window', f(wait)}
"""

# KEYS as RESERVE's; ARGV: now, usd, member, day, agent
COST = _CLOCK + """
redis.call('SADD', KEYS[6], ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', f(now - tonumber(ARGV[4])))
redis.call('ZADD', KEYS[2], f(now), ARGV[2] .. '|' .. ARGV[3])
return f(now)
"""

# KEYS as RESERVE's; ARGV: now, until, reason, -, agent
PAUSE = _CLOCK + """
redis.call('SADD', KEYS[6], ARGV[5])
local current = tonumber(redis.call('HGET', KEYS[3], 'until') or '0')
local wanted = tonumber(ARGV[2])
if current <= now or wanted > current then
  redis.call('HSET', KEYS[3], 'until', ARGV[2], 'reason', ARGV[3])
  current = wanted
end
return f(current)
"""


class RedisStore(FleetStore):
    def __init__(self, url: str, timeout_s: float = 2.0, clock: Callable[[], float] = time.time) -> None:
        self.where = public_url(url)
        self.clock = clock
        # no retries of our own: an unreachable store must show at once, the loop decides whether to wait
        self.client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s,
                                           retry=Retry(NoBackoff(), 0), decode_responses=True)
        self.scripts = {name: self.client.register_script(text)
                        for name, text in (("reserve", RESERVE), ("cost", COST), ("pause", PAUSE))}

    def call(self, what: Callable[[], T]) -> T:
        """Run one request; any failure to reach or use the server is StoreUnavailable, in one line."""
        try:
            return what()
        except (redis.RedisError, OSError) as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise StoreUnavailable(f"fleet store {self.where} cannot be reached: {text}") from None

    def limits(self, agent: str) -> RedisLimits:
        return RedisLimits(self, agent)

    def agents(self) -> list[str]:
        members: set[str] = self.call(lambda: self.client.smembers(PREFIX + "agents"))  # type: ignore[arg-type,return-value]
        return sorted(members)

    def epoch(self) -> str:
        key = PREFIX + "epoch"

        def ask() -> str:
            pipe = self.client.pipeline(transaction=True)  # one round trip
            pipe.set(key, uuid.uuid4().hex, nx=True)
            pipe.get(key)
            return str(pipe.execute()[1])

        return self.call(ask)

    def beat(self, record: dict[str, object]) -> None:
        self.call(lambda: self.client.hset(PREFIX + "loops", str(record["loop_id"]), json.dumps(record)))

    def loops(self) -> list[dict[str, object]]:
        raw: dict[str, str] = self.call(lambda: self.client.hgetall(PREFIX + "loops"))  # type: ignore[arg-type,return-value]
        now, out, old = self.clock(), [], []
        for loop_id, text in sorted(raw.items()):
            try:
                record = json.loads(text)
            except ValueError:
                old.append(loop_id)
                continue
            if not isinstance(record, dict) or now - float(record.get("heartbeat") or 0) > FORGET_AFTER_S:
                old.append(loop_id)
            else:
                out.append(record)
        if old:
            self.call(lambda: self.client.hdel(PREFIX + "loops", *old))
        return out

    def close(self) -> None:
        self.client.close()


class RedisLimits(Limits):
    def __init__(self, store: RedisStore, agent: str) -> None:
        self.store, self.agent = store, agent
        base = f"{PREFIX}agent:{agent}:"
        # the same key list for every script (Redis Cluster needs the keys named; one slot per agent is not needed)
        self.keys = [base + "calls", base + "costs", base + "pause", base + "clock", PREFIX + "epoch",
                     PREFIX + "agents"]

    def _now(self, now: float | None) -> float:
        return self.store.clock() if now is None else now

    def reserve(self, max_per_hour: int, budget_usd: float, member: str, now: float | None = None,
                epoch: str | None = None) -> Reservation:
        script = self.store.scripts["reserve"]
        args = [repr(self._now(now)), str(max_per_hour), repr(budget_usd), member, epoch or "", uuid.uuid4().hex,
                repr(WINDOW_S), repr(DAY_S), self.agent]
        why, value = self.store.call(lambda: script(keys=self.keys, args=args))
        if why == "stale":
            return Reservation("stale", at=0.0, epoch=str(value))
        if why == "granted":
            return Reservation("granted", 0.0, float(value))
        return Reservation(str(why), float(value))

    def record_cost(self, usd: float, member: str, now: float | None = None) -> None:
        if usd <= 0:
            return
        script = self.store.scripts["cost"]
        args = [repr(self._now(now)), repr(round(usd, 6)), member, repr(DAY_S), self.agent]
        self.store.call(lambda: script(keys=self.keys, args=args))

    def pause_until(self, until: float, reason: str, now: float | None = None) -> float:
        script = self.store.scripts["pause"]
        args = [repr(self._now(now)), repr(until), reason, "0", self.agent]
        return float(self.store.call(lambda: script(keys=self.keys, args=args)))

    def pause(self, now: float | None = None) -> tuple[float, str] | None:
        raw: dict[str, str] = self.store.call(lambda: self.store.client.hgetall(self.keys[2]))  # type: ignore[arg-type,return-value]
        until = float(raw.get("until") or 0)
        return (until, raw.get("reason") or "") if until > self._now(now) else None

    def spent_usd(self, window_s: float = DAY_S, now: float | None = None) -> float:
        low = f"({self._now(now) - window_s!r}"
        members: list[str] = self.store.call(lambda: self.store.client.zrangebyscore(self.keys[1], low, "+inf"))  # type: ignore[arg-type,return-value]
        return round(sum(float(m.split("|", 1)[0]) for m in members), 6)

    def calls_in_window(self, now: float | None = None) -> int:
        low = f"({self._now(now) - WINDOW_S!r}"
        return int(self.store.call(lambda: self.store.client.zcount(self.keys[0], low, "+inf")))

    def restore(self, calls: list[tuple[float, str]], costs: list[tuple[float, float, str]]) -> None:
        def push() -> None:
            pipe = self.store.client.pipeline(transaction=True)
            pipe.sadd(PREFIX + "agents", self.agent)
            if calls:
                pipe.zadd(self.keys[0], {member: at for at, member in calls}, nx=True)
            if costs:
                pipe.zadd(self.keys[1], {f"{round(usd, 6)!r}|{member}": at for at, usd, member in costs}, nx=True)
            pipe.execute()

        self.store.call(push)
