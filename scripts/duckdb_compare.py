#!/usr/bin/env python3
"""Times the same funnels in `boardwalk query` and in DuckDB over the same events, and prints the ratio.

Setup (DuckDB comes from PyPI):

    python3 -m venv .venv && .venv/bin/pip install duckdb
    swift build -c release --product boardwalk
    .venv/bin/python scripts/duckdb_compare.py --sessions 100000 --workdir /tmp/bw-100k --keep
    .venv/bin/python scripts/duckdb_compare.py --sessions 100000 --workdir /tmp/bw-100k --reuse   # again, no rebuild

What it does:
  1. `boardwalk generate` a corpus over --onboardings onboardings (default 50, as in the performance targets),
     `boardwalk ingest` it into a fresh store (skipped with --reuse when the work directory already has them).
  2. `boardwalk export --format csv` the stored events (so DuckDB gets the store's sessions, inferred ones
     included) and writes them to Parquet ordered by (onboarding, screen, time): the same clustering as the
     store's key, which lets DuckDB skip row groups for one onboarding; the strongest fair layout for it.
  3. Runs two queries in both, checks that the `step` and `sessions` columns agree, and times them:
     - the screen funnel over the whole store:      sessions | funnel
     - the screen funnel of the busiest onboarding: sessions | where onboarding == "…" | funnel
     - the same for the onboarding of median size (the generator's onboardings are very unequal)
     - the screen funnel of the sessions that started in the store's last stretch (the latest 15 % of session
       starts, cut to a whole second):                sessions | where started >= @… | funnel
     - a property of each event's session, on the busiest onboarding:
         events | where onboarding == "…" and name == "screen_presented" and session.completed | count by screen
       and the same question without the property, the query it extends:
         events | where onboarding == "…" and name == "screen_presented" | count by screen
     - the screen funnel of the busiest onboarding by an answer (rule 12, the session's last answer):
         sessions | where onboarding == "…" | funnel by answer("level")
     - a time-bucket count:                          sessions | count by day(started)
     - a second reduction over a first:              sessions | count by profile | where count > 1 | count
     Every case is first run once in both engines and its rows compared (the funnels' step, sessions and median
     time; every column of the others); a case whose rows differ stops the script before anything is timed.
     Both engines are timed on their first query in a new process and on the query repeated in one process,
     and each pair is compared:
     - first query: Boardwalk's is the query's own time that `boardwalk query --timing` prints (parse, plan,
       read, reduce, render, after the store is open; the open time is printed beside it), which pays the
       process's first touch of every page of the store it reads (a page fault each, a few microseconds on
       this machine); DuckDB's is timed around `execute` and `fetchall` on a new connection in a new Python
       process (the interpreter, the module and the connection are not counted).
     - repeated: Boardwalk's is the same query repeated in one `boardwalk repl` process, best after the first;
       DuckDB's is the best of its repeated runs on one open connection.
     - command: the whole `boardwalk query` process (start, open, plan, read, render), against DuckDB repeated.
     The start-up of a trivial command (`boardwalk --version`) is printed too. DuckDB reads the Parquet file
     single-threaded unless --threads says otherwise (Boardwalk's query is single-threaded).
Times are the best of --runs runs. The machine is shared and noisy: read the ratios. --only runs some cases.
--paired N adds N rounds of the two first queries timed back to back, and the median of the rounds' ratios.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import duckdb
except ImportError:
    sys.exit("duckdb is not installed: python3 -m venv .venv && .venv/bin/pip install duckdb")

# The screen funnel of docs/analytics-semantics.md rule 3: step i counts sessions whose furthest screen index
# is >= i; steps run from 0 to the largest total_screens (or furthest index + 1) among the sessions in scope;
# median_time is the median (linear interpolation, rule 6) over sessions of the time from the session's first
# event to its first event at a screen >= i.
FUNNEL_SQL = """
WITH ev AS (
    SELECT session, epoch_us(time) AS t, screen, total_screens
    FROM read_parquet(?) {where}
),
s AS (
    SELECT session, min(t) AS t0, max(screen) AS furthest, max(total_screens) AS total
    FROM ev GROUP BY session
),
n AS (SELECT max(greatest(coalesce(total, 0), coalesce(furthest + 1, 0))) AS steps FROM s),
st AS (SELECT range AS step FROM range(0, (SELECT steps FROM n))),
reach AS (
    SELECT e.session, st.step, min(e.t) AS t
    FROM ev e JOIN st ON e.screen >= st.step
    GROUP BY e.session, st.step
)
SELECT st.step, count(r.session) AS sessions, quantile_cont((r.t - s.t0) / 1e6, 0.5) AS median_time
FROM st LEFT JOIN reach r ON r.step = st.step LEFT JOIN s ON s.session = r.session
GROUP BY st.step ORDER BY st.step
"""


# A property of each event's session (`session.completed`: the session has an `onboarding_completed` anywhere),
# on one onboarding, and the same count without it.
SESSION_PROPERTY_SQL = """
SELECT screen, count(*) AS count FROM read_parquet(?)
WHERE onboarding = ? AND name = 'screen_presented' AND session IN
    (SELECT session FROM read_parquet(?) WHERE kind = 'analytics' AND name = 'onboarding_completed')
GROUP BY screen ORDER BY screen
"""
EVENTS_SQL = """
SELECT screen, count(*) AS count FROM read_parquet(?) WHERE onboarding = ? AND name = 'screen_presented'
GROUP BY screen ORDER BY screen
"""

# The screen funnel (rule 3) by the session's last answer to `level` (rule 9, last write wins by (time, seq)),
# each group to its own sessions' steps; no answer is a group of its own, last.
FUNNEL_BY_ANSWER_SQL = """
WITH ev AS (
    SELECT session, epoch_us(time) AS t, seq, screen, total_screens, kind, element, value
    FROM read_parquet(?) {where}
),
ans AS (
    SELECT session, arg_max(value, (t, seq)) AS k FROM ev
    WHERE kind = 'state_updated' AND element = 'level' GROUP BY session
),
s AS (
    SELECT ev.session, min(t) AS t0, max(screen) AS furthest, max(total_screens) AS total, any_value(ans.k) AS k
    FROM ev LEFT JOIN ans ON ans.session = ev.session GROUP BY ev.session HAVING max(screen) IS NOT NULL
),
g AS (SELECT k, max(greatest(coalesce(total, 0), furthest + 1)) AS steps FROM s GROUP BY k),
st AS (SELECT range AS step FROM range(0, (SELECT max(steps) FROM g))),
reach AS (
    SELECT e.session, st.step, min(e.t) AS t FROM ev e JOIN st ON e.screen >= st.step GROUP BY e.session, st.step
),
rs AS (SELECT r.step, r.t - s.t0 AS dt, s.k FROM reach r JOIN s ON s.session = r.session)
SELECT g.k, st.step, count(rs.dt) AS sessions, quantile_cont(rs.dt / 1e6, 0.5) AS median_time
FROM g JOIN st ON st.step < g.steps
LEFT JOIN rs ON rs.step = st.step AND rs.k IS NOT DISTINCT FROM g.k
GROUP BY g.k, st.step ORDER BY g.k NULLS LAST, st.step
"""

# Sessions by the UTC day of their first event.
DAY_SQL = """
SELECT strftime(DATE '1970-01-01' + CAST(floor(t0 / 86400000000) AS INTEGER), '%Y-%m-%d') AS day, count(*) AS count
FROM (SELECT min(epoch_us(time)) AS t0 FROM read_parquet(?) WHERE session IS NOT NULL GROUP BY session)
GROUP BY day ORDER BY day
"""

# Profiles with more than one session: a count over the rows of a count (a session's profile is the first any
# of its events carries; none is a group of its own).
NESTED_SQL = """
SELECT count(*) AS count FROM (
    SELECT profile FROM (
        SELECT session, arg_min(profile, (epoch_us(time), seq)) FILTER (WHERE profile IS NOT NULL) AS profile
        FROM read_parquet(?) WHERE session IS NOT NULL GROUP BY session
    ) GROUP BY profile HAVING count(*) > 1
)
"""


def same_number(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(float(a) - float(b)) <= 1e-6 * max(1.0, abs(float(a)))


def rows_agree(bw_rows, dk_rows, columns):
    """Boardwalk's JSON rows against DuckDB's tuples, column by column (`columns`: Boardwalk's names, in the SQL's
    order); numbers to 1e-6 relative (median times are sums of microseconds)."""
    if len(bw_rows) != len(dk_rows):
        return False
    for bw, dk in zip(bw_rows, dk_rows):
        for name, value in zip(columns, dk):
            mine = bw.get(name)
            if isinstance(value, (int, float)) or isinstance(mine, (int, float)):
                if not same_number(mine, value):
                    return False
            elif mine != value:
                return False
    return True


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)


# `boardwalk query --timing` on stderr: "(N rows, 12.345 ms, … read; store opened in 0.412 ms)".
# Older builds printed the time rounded, in µs, ms or s, and no open time: accepted too.
TIMING = re.compile(r"\(\d+ rows?, ([0-9.]+) (µs|ms|s), .* read(?:; store opened in ([0-9.]+) ms)?\)")
UNIT = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def timed_query(cmd):
    """Runs `boardwalk query --timing …`: (stdout, the query's own seconds, the store's open seconds)."""
    done = run(cmd)
    match = TIMING.search(done.stderr)
    if not match:
        sys.exit(f"no timing line in the stderr of {cmd}: {done.stderr!r}")
    return done.stdout, float(match.group(1)) * UNIT[match.group(2)], float(match.group(3) or "nan") / 1e3


def warm_query(bw, query, runs):
    """The query's best own time over `runs` repetitions after a first one, all in one `boardwalk repl` process:
    the first run pays for the process's first touch of the store's pages and of its own code and metadata, the
    later ones do not (like DuckDB's repeated runs on one open connection)."""
    script = ".timing on\n.format json\n" + (query + "\n") * (runs + 1)
    done = subprocess.run(bw + ["repl"], input=script, check=True, capture_output=True, text=True)
    times = [float(m.group(1)) * UNIT[m.group(2)] for m in TIMING.finditer(done.stderr)]
    if len(times) != runs + 1:
        sys.exit(f"expected {runs + 1} timing lines from boardwalk repl, got {len(times)}: {done.stderr!r}")
    return min(times[1:])


# DuckDB's first query in a fresh process, timed like `boardwalk query --timing`: from an open connection (the
# process, the module and the connection are not counted) to the rows fetched.
DUCKDB_FIRST = """
import duckdb, json, sys, time
sql, params, threads = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3])
con = duckdb.connect()
con.execute(f"SET threads = {threads}")
con.execute("SET enable_progress_bar = false")
t0 = time.perf_counter()
con.execute(sql, params).fetchall()
print(time.perf_counter() - t0)
"""


def duckdb_first_query(sql, params, threads):
    """DuckDB's first query in a new process (seconds): the counterpart of boardwalk's in-process time."""
    done = run([sys.executable, "-c", DUCKDB_FIRST, sql, json.dumps(params), str(threads)])
    # The last line: anything DuckDB writes to stdout before it is not the time.
    return float(done.stdout.strip().splitlines()[-1])


def best_of(runs, fn):
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--onboardings", type=int, default=50, help="onboardings the sessions are drawn from")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the store and Parquet file already in --workdir (same --sessions, --seed, --onboardings)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="DuckDB threads (default 1, like Boardwalk)")
    parser.add_argument("--boardwalk", default=".build/release/boardwalk", help="the boardwalk executable")
    parser.add_argument("--workdir", default=None, help="where the corpus, store and Parquet go (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--compacted", action="store_true",
                        help="query a compacted copy of the store (`boardwalk backup`, made once in the work directory) "
                             "instead of the store as ingested: its pages are in key order, so an onboarding's blocks "
                             "are neighbours and a first query takes fewer page faults")
    keys = ["whole", "busiest", "median", "cohort", "events", "sessionprop", "funnelby", "bucket", "nested"]
    parser.add_argument("--only", choices=keys, action="append",
                        help="run only this case (repeatable; default: all)")
    parser.add_argument("--paired", type=int, default=0, metavar="N",
                        help="also time N rounds of the two first queries back to back (which engine goes first "
                             "alternates) and report the median of the rounds' ratios: on a noisy host, a ratio taken "
                             "within one round is steadier than one of two bests taken minutes apart")
    args = parser.parse_args()

    if not os.access(args.boardwalk, os.X_OK):
        sys.exit(f"{args.boardwalk} not found: swift build -c release --product boardwalk")
    work = args.workdir or tempfile.mkdtemp(prefix="boardwalk-duckdb-")
    os.makedirs(work, exist_ok=True)
    corpus, store = os.path.join(work, "corpus.ndjson"), os.path.join(work, "store")
    csv, parquet = os.path.join(work, "events.csv"), os.path.join(work, "events.parquet")
    reuse = args.reuse and os.path.isdir(store) and os.path.exists(parquet)
    if not reuse:
        shutil.rmtree(store, ignore_errors=True)
    bw = [args.boardwalk, "--db", store]
    ingest = None
    try:
        if not reuse:
            with open(corpus, "w") as out:
                subprocess.run([args.boardwalk, "generate", "--sessions", str(args.sessions), "--seed", str(args.seed),
                                "--onboardings", str(args.onboardings)], check=True, stdout=out)
            ingest = run(bw + ["ingest", corpus])
            with open(csv, "w") as out:
                subprocess.run(bw + ["export", "--format", "csv"], check=True, stdout=out, stderr=subprocess.DEVNULL)
            # The corpus and CSV are only steps to the store and the Parquet file.
            os.remove(corpus)

        if args.compacted:
            compacted = os.path.join(work, "store-compacted")
            if not os.path.isdir(compacted):
                run(bw + ["backup", compacted])
            bw = [args.boardwalk, "--db", compacted]

        con = duckdb.connect()
        con.execute(f"SET threads = {args.threads}")
        if not reuse:
            con.execute(f"""
                COPY (SELECT * FROM read_csv(?, header = true, auto_detect = true)
                      ORDER BY onboarding, screen, time, seq)
                TO '{parquet}' (FORMAT parquet)""", [csv])
            os.remove(csv)
        events = con.execute("SELECT count(*) FROM read_parquet(?)", [parquet]).fetchone()[0]
        by_size = [row[0] for row in con.execute("""
            SELECT onboarding FROM read_parquet(?) WHERE onboarding IS NOT NULL
            GROUP BY onboarding ORDER BY count(DISTINCT session) DESC, onboarding""", [parquet]).fetchall()]
        # The generator's onboardings are far from equal: the busiest holds about a fifth of the sessions of 50.
        # The median one is what "one onboarding of 50" usually means.
        busiest, median = by_size[0], by_size[len(by_size) // 2]

        startup, _ = best_of(args.runs, lambda: run([args.boardwalk, "--version"]))
        # Events of the onboarding (row groups pruned by the sort), plus its sessions' events without meta
        # (errors outside the page), which still count for a session's start.
        one = ("WHERE onboarding = ? OR (onboarding IS NULL AND session IN "
               "(SELECT session FROM read_parquet(?) WHERE onboarding = ?))")
        # A recent cohort: sessions whose first event (any event, with or without meta) is at or after the time by
        # which 85 % of the sessions had started, cut to a whole second so both engines get the same instant.
        cut = int(con.execute("""
            SELECT floor(quantile_disc(t0, 0.85) / 1000000) FROM
            (SELECT min(epoch_us(time)) AS t0 FROM read_parquet(?) WHERE session IS NOT NULL GROUP BY session)""",
            [parquet]).fetchone()[0])
        cohort = ("WHERE session IN (SELECT session FROM read_parquet(?) GROUP BY session "
                  "HAVING min(epoch_us(time)) >= CAST(? AS BIGINT) * 1000000)")
        cut_text = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(cut))
        funnel_columns = ["step", "sessions", "median_time"]
        screen_events = f'events | where onboarding == "{busiest}" and name == "screen_presented"'
        # (title, Boardwalk's query, DuckDB's SQL and parameters after the Parquet file, the columns compared)
        cases = [
            ("funnel over the whole store", "sessions | funnel", FUNNEL_SQL.format(where=""), [], funnel_columns),
            (f"funnel of the busiest of {len(by_size)}", f'sessions | where onboarding == "{busiest}" | funnel',
             FUNNEL_SQL.format(where=one), [busiest, parquet, busiest], funnel_columns),
            (f"funnel of the median of {len(by_size)}", f'sessions | where onboarding == "{median}" | funnel',
             FUNNEL_SQL.format(where=one), [median, parquet, median], funnel_columns),
            ("funnel of the latest 15 % started", f'sessions | where started >= @{cut_text} | funnel',
             FUNNEL_SQL.format(where=cohort), [parquet, cut], funnel_columns),
            ("screens of the busiest", screen_events + " | count by screen", EVENTS_SQL, [busiest],
             ["screen", "count"]),
            ("... of its completed sessions", screen_events + " and session.completed | count by screen",
             SESSION_PROPERTY_SQL, [busiest, parquet], ["screen", "count"]),
            ("funnel of the busiest by answer", f'sessions | where onboarding == "{busiest}" | funnel by answer("level")',
             FUNNEL_BY_ANSWER_SQL.format(where=one), [busiest, parquet, busiest],
             ['answer("level")', "step", "sessions", "median_time"]),
            ("sessions by day", "sessions | count by day(started)", DAY_SQL, [], ["day(started)", "count"]),
            ("profiles that came back", "sessions | count by profile | where count > 1 | count", NESTED_SQL, [],
             ["count"]),
        ]
        if args.only:
            cases = [case for case, key in zip(cases, keys) if key in args.only]
        # Equal answers first: a case whose rows differ stops the script before anything is timed.
        for title, query, sql, params, columns in cases:
            bw_rows = json.loads(run(bw + ["query", "--format", "json", query]).stdout)
            dk_rows = con.execute(sql, [parquet] + params).fetchall()
            if not rows_agree(bw_rows, dk_rows, columns):
                sys.exit(f"{title}: Boardwalk and DuckDB differ\n{query}\n{bw_rows[:20]}\n{dk_rows[:20]}")
        results = []
        for title, query, sql, params, columns in cases:
            bw_time, (bw_out, _, _) = best_of(
                args.runs, lambda: timed_query(bw + ["query", "--timing", "--format", "json", query]))
            # In process: the best of the query's own times (separate runs, so the process timing is untouched).
            inner = [timed_query(bw + ["query", "--timing", "--format", "json", query]) for _ in range(args.runs)]
            bw_inner = min(t for _, t, _ in inner)
            bw_warm = warm_query(bw, query, args.runs)
            bw_open = min(o for _, _, o in inner)
            dk_time, dk_rows = best_of(args.runs, lambda: con.execute(sql, [parquet] + params).fetchall())
            dk_first = min(duckdb_first_query(sql, [parquet] + params, args.threads) for _ in range(args.runs))
            bw_rows = json.loads(bw_out)
            agree = rows_agree(bw_rows, dk_rows, columns)
            paired = []
            for i in range(args.paired):
                if i % 2 == 0:
                    dk = duckdb_first_query(sql, [parquet] + params, args.threads)
                    _, b, _ = timed_query(bw + ["query", "--timing", "--format", "json", query])
                else:
                    _, b, _ = timed_query(bw + ["query", "--timing", "--format", "json", query])
                    dk = duckdb_first_query(sql, [parquet] + params, args.threads)
                paired.append(dk / b)
            results.append({
                "paired_first_query_ratios": paired,
                "query": title, "boardwalk_query": query, "boardwalk_seconds": bw_time, "duckdb_seconds": dk_time,
                "boardwalk_speedup": dk_time / bw_time,
                "boardwalk_in_process_seconds": bw_inner, "boardwalk_open_seconds": bw_open,
                "duckdb_first_query_seconds": dk_first, "boardwalk_first_query_speedup": dk_first / bw_inner,
                "boardwalk_warm_seconds": bw_warm, "boardwalk_warm_speedup": dk_time / bw_warm,
                "results_agree": agree,
                "steps": len(bw_rows),
            })
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)

    report = {"sessions": args.sessions, "events": events, "duckdb_version": duckdb.__version__,
              "duckdb_threads": args.threads, "boardwalk_startup_seconds": startup, "runs": args.runs,
              "onboardings": args.onboardings, "boardwalk_store": "compacted copy" if args.compacted else "as ingested",
              "ingest": ingest.stdout.strip().splitlines()[-1] if ingest and ingest.stdout.strip() else "reused", "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.sessions} sessions over {args.onboardings} onboardings, {events} events; DuckDB {duckdb.__version__} with {args.threads} thread(s) "
          f"over Parquet ordered by (onboarding, screen, time); best of {args.runs}; Boardwalk's store "
          f"{'compacted (boardwalk backup)' if args.compacted else 'as ingested'}")
    print(f"boardwalk process start-up (boardwalk --version): {startup * 1e3:.1f} ms, included in its whole-command times")
    print("first query: each engine's first query in a new process, from an open store or connection to the rows "
          "(`boardwalk query --timing`; DuckDB timed around execute and fetch); repeated: the query run again in the same "
          "process (a `boardwalk repl`, best after the first; DuckDB, best of its runs on one connection); command: the "
          "whole `boardwalk query` process, against DuckDB repeated. Ratios are DuckDB's time / Boardwalk's.")
    for r in results:
        verdict = "results agree" if r["results_agree"] else "RESULTS DIFFER"
        print(f"{r['query']:30} first query: duckdb {r['duckdb_first_query_seconds'] * 1e3:8.1f} ms, boardwalk "
              f"{r['boardwalk_in_process_seconds'] * 1e3:8.1f} ms ({r['boardwalk_first_query_speedup']:.2f}x), open "
              f"{r['boardwalk_open_seconds'] * 1e3:.1f} ms | repeated: duckdb {r['duckdb_seconds'] * 1e3:8.1f} ms, "
              f"boardwalk {r['boardwalk_warm_seconds'] * 1e3:8.1f} ms ({r['boardwalk_warm_speedup']:.2f}x) | command "
              f"{r['boardwalk_seconds'] * 1e3:8.1f} ms ({r['boardwalk_speedup']:.2f}x)   {verdict}")
        ratios = sorted(r["paired_first_query_ratios"])
        if ratios:
            median = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
            print(f"{'':30} paired first queries, {len(ratios)} rounds: median ratio {median:.2f}x "
                  f"({ratios[0]:.2f}–{ratios[-1]:.2f}x), {sum(x >= 10 for x in ratios)} of {len(ratios)} rounds at 10x or more")
    if not all(r["results_agree"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
