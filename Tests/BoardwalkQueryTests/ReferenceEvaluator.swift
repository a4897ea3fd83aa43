import BoardwalkModel
import Foundation

@testable import BoardwalkQuery

/// A deliberately simple evaluator over an array of events, written from `analytics-semantics.md` without the
/// executor's machinery: no key ranges, no planner, no streaming state; sessions recomputed from their event
/// lists by brute force; funnels by enumerating every chain. It shares only the front end (the checked query),
/// `Value`'s comparison rules and the expression combinators, which are the language's definition.
struct ReferenceEvaluator {
    let now: Timestamp

    struct Row {
        var event: Event
        var seq: Int
        var dwell: Value
        var censored: Bool
    }

    struct Session {
        var id: String
        var events: [Row]
    }

    // MARK: Nulls (rule 11)

    /// An empty id, element id or reply (Android sends `""`) is absent.
    func withoutEmptyStrings(_ event: Event) -> Event {
        func absentIfEmpty(_ s: String?) -> String? { s?.isEmpty == true ? nil : s }
        var e = event
        e.session = absentIfEmpty(e.session)
        e.profile = absentIfEmpty(e.profile)
        e.eventID = absentIfEmpty(e.eventID)
        e.placement = absentIfEmpty(e.placement)
        e.variation = absentIfEmpty(e.variation)
        if case .analytics(.screenCompleted(let element, let reply)) = e.payload {
            e.payload = .analytics(.screenCompleted(elementID: absentIfEmpty(element), reply: absentIfEmpty(reply)))
        }
        return e
    }

    // MARK: Sessions (rules 1 and 10)

    func sessions(_ input: [Event]) -> [Session] {
        var events = input
        // Rule 10: infer ids per (profile, onboarding); 30 minutes of silence starts a new one, and so does a start
        // event after anything but start events.
        let missing = events.indices.filter { events[$0].session == nil }
        var groups: [String: [Int]] = [:]
        for i in missing {
            groups[
                "\(events[i].profile ?? "")\u{0}\(events[i].meta?.onboardingID ?? "")\u{0}\(events[i].profile == nil)\u{0}\(events[i].meta == nil)",
                default: []
            ].append(i)
        }
        for (_, list) in groups {
            let ordered = list.sorted { (events[$0].time.microseconds, $0) < (events[$1].time.microseconds, $1) }
            var previous: Int64?
            var id = ""
            var onlyStarts = false
            for i in ordered {
                let e = events[i]
                let isStart = e.kind == .onboardingLoaded || e.payload == .analytics(.onboardingStarted)
                let gap = previous.map { e.time.microseconds - $0 >= 30 * 60 * 1_000_000 } ?? true
                if gap || (isStart && !onlyStarts) {
                    id = "inferred:\(i)"
                    onlyStarts = isStart
                } else {
                    onlyStarts = onlyStarts && isStart
                }
                previous = e.time.microseconds
                events[i].session = id
            }
        }
        var byID: [String: [Row]] = [:]
        for (i, e) in events.enumerated() {
            byID[e.session!, default: []].append(Row(event: e, seq: i, dwell: .null, censored: false))
        }
        return byID.map { id, rows in
            var rows = rows.sorted { ($0.event.time.microseconds, $0.seq) < ($1.event.time.microseconds, $1.seq) }
            // Rule 7, by looking forward from each presentation.
            for i in rows.indices {
                guard rows[i].event.payload == .analytics(.screenPresented),
                    let screen = rows[i].event.meta?.screenIndex
                else { continue }
                rows[i].censored = true
                for j in (i + 1)..<max(i + 1, rows.count) {
                    let later = rows[j].event
                    let terminal =
                        later.payload == .analytics(.onboardingCompleted) || later.kind == .openPaywall
                        || later.kind == .close || later.kind == .error
                    let elsewhere = later.meta != nil && later.meta!.screenIndex != screen
                    if terminal || elsewhere {
                        rows[i].dwell = .duration(Double(later.time.microseconds - rows[i].event.time.microseconds))
                        rows[i].censored = false
                        break
                    }
                }
            }
            return Session(id: id, events: rows)
        }
    }

    // MARK: Fields

    func eventField(_ f: EventField, _ row: Row) -> Value {
        let e = row.event
        func s(_ x: String?) -> Value { x == nil ? .null : .string(x!) }
        func blankIsAbsent(_ x: String?) -> Value { x == nil || x == "" ? .null : .string(x!) }
        switch f {
        case .time: return .time(e.time)
        case .seq: return .integer(Int64(row.seq))
        case .kind: return .string(e.kind.rawValue)
        case .name:
            if case .analytics(let a) = e.payload { return .string(a.name) }
            return .string(e.kind.rawValue)
        case .onboarding: return s(e.meta?.onboardingID)
        case .screen: return e.meta == nil ? .null : .integer(Int64(e.meta!.screenIndex))
        case .screenCID: return s(e.meta?.screenClientID)
        case .totalScreens: return e.meta == nil ? .null : .integer(Int64(e.meta!.totalScreens))
        case .session: return s(e.session)
        case .profile: return s(e.profile)
        case .placement: return s(e.placement)
        case .variation: return s(e.variation)
        case .eventID: return s(e.eventID)
        case .action:
            switch e.payload {
            case .openPaywall(let a), .custom(let a), .close(let a): return .string(a)
            default: return .null
            }
        case .element:
            if case .analytics(.screenCompleted(let element, _)) = e.payload { return blankIsAbsent(element) }
            if case .stateUpdated(let u) = e.payload { return blankIsAbsent(u.elementID) }
            return .null
        case .reply:
            if case .analytics(.screenCompleted(_, let reply)) = e.payload { return blankIsAbsent(reply) }
            return .null
        case .elementType:
            if case .stateUpdated(let u) = e.payload { return .string(u.value.elementType.rawValue) }
            return .null
        case .value:
            if case .stateUpdated(let u) = e.payload { return answerValue(u.value) }
            return .null
        case .label:
            guard case .stateUpdated(let u) = e.payload else { return .null }
            switch u.value {
            case .select(let c): return .string(c.label)
            // Nothing chosen is no value (rule 11).
            case .multiSelect(let cs): return cs.isEmpty ? .null : .set(Set(cs.map(\.label)).sorted())
            default: return .null
            }
        case .option:
            guard case .stateUpdated(let u) = e.payload else { return .null }
            switch u.value {
            case .select(let c): return .string(c.id)
            case .multiSelect(let cs): return cs.isEmpty ? .null : .set(Set(cs.map(\.id)).sorted())
            default: return .null
            }
        case .inputType:
            guard case .stateUpdated(let u) = e.payload, case .input(let input) = u.value else { return .null }
            switch input {
            case .text: return .string("text")
            case .email: return .string("email")
            case .number: return .string("number")
            }
        case .errorDomain, .errorCode, .errorMessage:
            guard case .error(let error) = e.payload else { return .null }
            return f == .errorDomain
                ? .string(error.domain) : f == .errorCode ? .integer(Int64(error.code)) : .string(error.message)
        case .dwell: return row.dwell
        }
    }

    func answerValue(_ v: StateValue) -> Value {
        switch v {
        case .select(let c): return .string(c.value)
        // Nothing chosen, and a number that is not finite, are no value (rule 11).
        case .multiSelect(let cs): return cs.isEmpty ? .null : .set(Set(cs.map(\.value)).sorted())
        case .input(.text(let t)), .input(.email(let t)): return .string(t)
        case .input(.number(let n)): return n.isFinite ? .number(n) : .null
        case .datePicker(let d):
            // A whole date (rule 9) is its day, from UTC midnight, shown as the date: checked with Foundation's
            // calendar, which refuses nothing but moves a day off the calendar (March 32 is April 1).
            if let y = d.year, let m = d.month, let day = d.day, (1...9999).contains(y) {
                var calendar = Calendar(identifier: .gregorian)
                calendar.timeZone = TimeZone(identifier: "UTC")!
                if let date = calendar.date(from: DateComponents(year: y, month: m, day: day)) {
                    let back = calendar.dateComponents([.year, .month, .day], from: date)
                    if back.year == y, back.month == m, back.day == day {
                        let micros = Int64(date.timeIntervalSince1970) * 1_000_000
                        return .bucket(TimeBucket(start: Timestamp(microseconds: micros), unit: .day, offset: 0))
                    }
                }
            }
            func part(_ x: Int?, _ w: Int) -> String {
                guard let x else { return String(repeating: "?", count: w) }
                var t = String(x)
                while t.count < w { t = "0" + t }
                return t
            }
            return .string(part(d.year, 4) + "-" + part(d.month, 2) + "-" + part(d.day, 2))
        }
    }

    func sessionLeaf(_ b: Bound, _ session: Session) -> Value {
        let events = session.events.map(\.event)
        let placed = events.compactMap(\.meta)
        switch b {
        case .answer(let element):
            for e in events.reversed() {
                if case .stateUpdated(let u) = e.payload, u.elementID == element, element != "" {
                    return answerValue(u.value)
                }
            }
            return .null
        case .did(let x):
            return .bool(
                events.contains { e in
                    if e.kind.rawValue == x { return true }
                    if case .analytics(let a) = e.payload { return a.name == x }
                    return false
                })
        case .reached(let n):
            return .bool(placed.contains { $0.screenIndex >= n })
        case .session(let f):
            func first(_ k: KeyPath<Event, String?>) -> Value {
                events.first { $0[keyPath: k] != nil }.map { .string($0[keyPath: k]!) } ?? .null
            }
            switch f {
            case .session: return .string(session.id)
            case .profile: return first(\.profile)
            case .placement: return first(\.placement)
            case .variation: return first(\.variation)
            case .onboarding: return placed.first.map { .string($0.onboardingID) } ?? .null
            case .started: return .time(events.first!.time)
            case .ended: return .time(events.last!.time)
            case .duration: return .duration(Double(events.last!.time.microseconds - events.first!.time.microseconds))
            case .events: return .integer(Int64(events.count))
            case .furthestScreen: return placed.map(\.screenIndex).max().map { .integer(Int64($0)) } ?? .null
            case .lastScreen: return placed.last.map { .integer(Int64($0.screenIndex)) } ?? .null
            case .totalScreens: return placed.map(\.totalScreens).max().map { .integer(Int64($0)) } ?? .null
            case .completed: return .bool(events.contains { $0.payload == .analytics(.onboardingCompleted) })
            case .paywall: return .bool(events.contains { $0.kind == .openPaywall })
            case .closed: return .bool(events.contains { $0.kind == .close })
            case .emailCollected: return .bool(events.contains { $0.payload == .analytics(.userEmailCollected) })
            case .exit:
                for e in events.reversed() {
                    if e.payload == .analytics(.onboardingCompleted) { return .string("completed") }
                    if e.kind == .openPaywall { return .string("paywall") }
                    if e.kind == .close { return .string("closed") }
                    if e.kind == .error { return .string("error") }
                }
                return .string("abandoned")
            }
        default: return .null
        }
    }

    // MARK: Running

    func run(_ q: CheckedQuery, _ input: [Event]) -> ResultTable {
        let sessions = sessions(input.map(withoutEmptyStrings))
        // Every row as a leaf function, before filtering.
        var rows: [(leaf: (Bound) -> Value, censored: Bool, order: (Int64, Int, String), session: Session?)] = []
        if q.source == .events {
            for s in sessions {
                for r in s.events {
                    rows.append(
                        (
                            { b in
                                switch b {
                                case .event(let f): return eventField(f, r)
                                case .ofSession(let property): return sessionLeaf(property, s)
                                default: return .null
                                }
                            },
                            r.censored, (r.event.time.microseconds, r.seq, ""), nil
                        ))
                }
            }
        } else {
            for s in sessions {
                rows.append(({ b in sessionLeaf(b, s) }, false, (s.events[0].event.time.microseconds, 0, s.id), s))
            }
        }
        rows = rows.filter { row in q.filters.allSatisfy { $0.evaluate(now: now, row.leaf).isTrue } }
        guard let reduction = q.reduction else {
            let ordered = rows.sorted { a, b in a.order < b.order }
            let table = ResultTable(
                columns: q.columns, rows: ordered.map { r in q.rowColumns.map { $0.bound.evaluate(now: now, r.leaf) } })
            return tableStages(q, table)
        }
        return tableStages(q, reduce(reduction, columns: q.columns, rows))
    }

    typealias Input = (leaf: (Bound) -> Value, censored: Bool, order: (Int64, Int, String), session: Session?)

    /// A reduction over rows given as leaf functions (the source's rows, or a result's rows in a later stage).
    func reduce(_ reduction: Reduction, columns: [String], _ rows: [Input]) -> ResultTable {
        var table: ResultTable
        switch reduction {
        case .count(let by):
            let groups = group(rows.map { r in (by.map { $0.bound.evaluate(now: now, r.leaf) }, r) })
            var out = groups.map { $0.key + [.integer(Int64($0.rows.count))] }
            if by.isEmpty && out.isEmpty { out = [[.integer(0)]] }
            table = ResultTable(columns: columns, rows: out)
        case .top(let n, let key):
            // Rule 11: absent is not one of the values.
            let groups = group(rows.map { r in ([key.bound.evaluate(now: now, r.leaf)], r) }).filter {
                $0.key[0] != .null
            }
            let counted = groups.map { $0.key + [.integer(Int64($0.rows.count))] }
            // Stable sort by count descending keeps the key order among ties.
            var sorted = counted
            for i in sorted.indices {
                for j in stride(from: i, to: 0, by: -1) {
                    guard case .integer(let a) = sorted[j][1], case .integer(let b) = sorted[j - 1][1], a > b else {
                        break
                    }
                    sorted.swapAt(j, j - 1)
                }
            }
            table = ResultTable(columns: columns, rows: Array(sorted.prefix(n)))
        case .histogram(let value, let step):
            var keyed: [([Value], Input)] = []
            for r in rows {
                let v = value.bound.evaluate(now: now, r.leaf)
                let x: Double
                switch v {
                case .integer(let i): x = Double(i)
                case .number(let d), .duration(let d): x = d
                default: continue
                }
                guard x.isFinite else { continue }
                // Decimal arithmetic, as the semantics say: the value and the step as the shortest decimals that
                // print as them, the bucket floor(f / w) · w exactly, then the nearest Double.
                let f = Decimal(string: "\(x)")!, w = Decimal(string: "\(step)")!
                var quotient = f / w, k = Decimal()
                NSDecimalRound(&k, &quotient, 0, .down)
                let b = NSDecimalNumber(decimal: k * w).doubleValue
                keyed.append(([value.type == .duration ? .duration(b) : .number(b)], r))
            }
            var out = group(keyed).map { $0.key + [.integer(Int64($0.rows.count))] }
            if value.bound.readsDwell {
                out =
                    out.map { $0 + [.bool(false)] } + [
                        [.null, .integer(Int64(rows.filter(\.censored).count)), .bool(true)]
                    ]
            }
            table = ResultTable(columns: columns, rows: out)
        case .stats(let aggregates, let by, let censored):
            var groups = group(rows.map { r in (by.map { $0.bound.evaluate(now: now, r.leaf) }, r) })
            if by.isEmpty && groups.isEmpty { groups = [([], [])] }
            table = ResultTable(
                columns: columns,
                rows: groups.map { g in
                    var out = g.key
                    for a in aggregates {
                        out.append(
                            aggregate(a, g.rows.map { r in a.argument.map { $0.evaluate(now: now, r.leaf) } ?? .null }))
                    }
                    if censored { out.append(.integer(Int64(g.rows.filter(\.censored).count))) }
                    return out
                })
        case .funnel(let f):
            table = ResultTable(columns: columns, rows: funnel(f, rows.compactMap(\.session)))
        case .paths(let p):
            table = ResultTable(columns: columns, rows: paths(p, rows.compactMap(\.session)))
        }
        return table
    }

    /// Groups rows by key, exploding set-valued keys; groups sorted by key, absent last.
    func group<R>(_ keyed: [([Value], R)]) -> [(key: [Value], rows: [R])] {
        var out: [(key: [Value], rows: [R])] = []
        for (key, row) in keyed {
            var combos: [[Value]] = [[]]
            for v in key {
                var options = [v]
                if case .set(let items) = v { options = items.isEmpty ? [.null] : items.map { .string($0) } }
                combos = combos.flatMap { c in options.map { c + [$0] } }
            }
            for c in combos {
                if let i = out.firstIndex(where: { $0.key == c }) {
                    out[i].rows.append(row)
                } else {
                    out.append((c, [row]))
                }
            }
        }
        return out.sorted { a, b in
            for (x, y) in zip(a.key, b.key) where x != y { return Value.sortsBefore(x, y) }
            return false
        }
    }

    func aggregate(_ a: BoundAggregate, _ values: [Value]) -> Value {
        let present = values.filter { !$0.isNull }
        let numbers: [Double] = present.compactMap {
            switch $0 {
            case .integer(let i): Double(i)
            case .number(let d), .duration(let d): d
            default: nil
            }
        }
        let asResult: (Double) -> Value = { a.resultType == .duration ? .duration($0) : .number($0) }
        switch a.function {
        case .count: return .integer(Int64(values.count))
        case .countPresent: return .integer(Int64(present.count))
        case .countDistinct:
            var seen: [Value] = []
            for v in present {
                let items: [Value] = if case .set(let s) = v { s.map { .string($0) } } else { [v] }
                for item in items where !seen.contains(item) { seen.append(item) }
            }
            return .integer(Int64(seen.count))
        case .sum:
            // docs/query-language.md: a sum of integers is exact and absent past 64 bits; any other number makes
            // it a double sum, absent when not finite.
            let integers = present.compactMap { if case .integer(let i) = $0 { Int128(i) } else { nil } }
            if a.resultType != .duration, integers.count == numbers.count {
                return Int64(exactly: integers.reduce(0, +)).map(Value.integer) ?? .null
            }
            return asResult(numbers.reduce(0, +)).finite
        case .avg: return numbers.isEmpty ? .null : asResult(numbers.reduce(0, +) / Double(numbers.count)).finite
        case .min, .max:
            guard !present.isEmpty else { return .null }
            let sorted = present.sorted { Value.sortsBefore($0, $1) }
            return a.function == .min ? sorted.first! : sorted.last!
        case .percentile(let q):
            return referencePercentile(numbers, q).map(asResult) ?? .null
        case .rate:
            return values.isEmpty ? .null : .number(Double(values.filter(\.isTrue).count) / Double(values.count))
        case .ciLow(let level), .ciHigh(let level):
            guard !values.isEmpty else { return .null }
            let interval = referenceWilson(values.filter(\.isTrue).count, values.count, level)
            return .number(a.function == .ciLow(level) ? interval.low : interval.high)
        }
    }

    /// The Wilson score interval as its textbook writes it: the roots in p of (x/n − p)² = z²·p(1 − p)/n, with z
    /// the two-sided normal quantile found by bisection on `erfc` (not the executor's rational approximation).
    func referenceWilson(_ x: Int, _ n: Int, _ level: Double) -> (low: Double, high: Double) {
        var lo = 0.0
        var hi = 40.0
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if erfc(mid / 2.0.squareRoot()) > 1 - level { lo = mid } else { hi = mid }
        }
        let z = (lo + hi) / 2
        // n·(x/n − p)² − z²·p(1 − p) = 0  ⇔  (n + z²)p² − (2x + z²)p + x²/n = 0.
        let a = Double(n) + z * z
        let b = -(2 * Double(x) + z * z)
        let c = Double(x) * Double(x) / Double(n)
        let root = (b * b - 4 * a * c).squareRoot()
        return (max(0, (-b - root) / (2 * a)), min(1, (-b + root) / (2 * a)))
    }

    /// numpy "linear": the value at fractional rank q·(n−1) of the sorted values.
    func referencePercentile(_ values: [Double], _ q: Double) -> Double? {
        if values.isEmpty { return nil }
        let v = values.sorted()
        let rank = q * Double(v.count - 1)
        let i = Int(rank)
        if i + 1 >= v.count { return v[v.count - 1] }
        return v[i] + (rank - Double(i)) * (v[i + 1] - v[i])
    }

    // MARK: Funnels (rules 3, 4, 5, 12)

    func funnel(_ f: BoundFunnel, _ sessions: [Session]) -> [[Value]] {
        func stepStats(_ reached: [Int], _ i: Int) -> [Value] {
            let first = reached[0], previous = i == 0 ? reached[0] : reached[i - 1]
            return [
                .integer(Int64(reached[i])), first == 0 ? .null : .number(Double(reached[i]) * 100 / Double(first)),
                previous == 0 ? .null : .number(Double(reached[i]) * 100 / Double(previous)),
                .integer(Int64(previous - reached[i])),
            ]
        }
        func byKeys(_ row: Row?, _ session: Session) -> [Value] {
            f.by.map { c in
                c.bound.evaluate(now: now) { b in
                    if case .event(let field) = b, let row {
                        return eventField(field, Row(event: row.event, seq: row.seq, dwell: .null, censored: false))
                    }
                    if case .ofSession(let property) = b { return sessionLeaf(property, session) }
                    return .null
                }
            }
        }
        var out: [[Value]] = []
        if f.steps.isEmpty {
            var steps = 0
            for s in sessions {
                for r in s.events { if let m = r.event.meta { steps = max(steps, m.totalScreens, m.screenIndex + 1) } }
            }
            // Per session: the key at the first placed event, for each step the time the screen was first
            // reached (nil: not reached), as far as the session's own screens go, and the distinct screen client
            // ids of its events at each screen index.
            var keyed: [([Value], (reach: [Double?], clients: [Int: Set<String>]))] = []
            for s in sessions {
                guard let first = s.events.first(where: { $0.event.meta != nil }) else { continue }
                let t0 = s.events[0].event.time.microseconds
                var own = 0
                for r in s.events { if let m = r.event.meta { own = max(own, m.totalScreens, m.screenIndex + 1) } }
                let reach: [Double?] = (0..<own).map { i in
                    s.events.first { ($0.event.meta?.screenIndex ?? -1) >= i }.map {
                        Double($0.event.time.microseconds - t0)
                    }
                }
                var clients: [Int: Set<String>] = [:]
                for r in s.events {
                    if let m = r.event.meta { clients[m.screenIndex, default: []].insert(m.screenClientID) }
                }
                keyed.append((byKeys(first, s), (reach, clients)))
            }
            var groups = group(keyed.map { ($0.0, $0.1) })
            if f.by.isEmpty && groups.isEmpty && steps > 0 { groups = [([], [])] }
            for g in groups {
                // Rule 3: up to the largest screen count among the sessions in scope, or with `by`, in the group.
                let reaches = g.rows.map(\.reach)
                let groupSteps = f.by.isEmpty ? steps : reaches.map(\.count).max() ?? 0
                let reached = (0..<groupSteps).map { i in reaches.filter { i < $0.count && $0[i] != nil }.count }
                for i in 0..<groupSteps {
                    var row = g.key
                    if !f.by.isEmpty { row.append(.integer(0)) }
                    row.append(.integer(Int64(i)))
                    // The client id the most sessions of the group have events with at screen index i; ties: the
                    // smallest in byte order.
                    var sessionsByClient: [String: Int] = [:]
                    for r in g.rows { for c in r.clients[i] ?? [] { sessionsByClient[c, default: 0] += 1 } }
                    let top = sessionsByClient.max { a, b in
                        a.value != b.value ? a.value < b.value : b.key.utf8.lexicographicallyPrecedes(a.key.utf8)
                    }
                    row.append(top.map { .string($0.key) } ?? .null)
                    row += stepStats(reached, i)
                    row.append(
                        referencePercentile(reaches.compactMap { i < $0.count ? $0[i] : nil }, 0.5).map {
                            .duration($0)
                        }
                            ?? .null)
                    out.append(row)
                }
            }
            return out
        }
        let n = f.steps.count
        var keyed: [([Value], (level: Int, times: [Double]))] = []
        for s in sessions {
            let (chain, first, done) = bestChain(f, s.events)
            guard !chain.isEmpty else { continue }
            let times = done.map { Double($0 - done[0]) }
            keyed.append((byKeys(first.map { s.events[$0] }, s), (chain.count, times)))
        }
        var groups = group(keyed)
        if f.by.isEmpty && groups.isEmpty { groups = [([], [])] }
        for g in groups {
            let reached = (0..<n).map { k in g.rows.filter { $0.level > k }.count }
            for k in 0..<n {
                var row = g.key
                if !f.by.isEmpty { row.append(.integer(1)) }
                row += [.integer(Int64(k + 1)), .string(f.steps[k].name)]
                row += stepStats(reached, k)
                let times = g.rows.filter { $0.level > k && !$0.times.isEmpty }.map { $0.times[k] }
                row.append(times.isEmpty ? .null : .duration(times.reduce(0, +) / Double(times.count)))
                row.append(referencePercentile(times, 0.5).map { .duration($0) } ?? .null)
                row.append(referencePercentile(times, 0.9).map { .duration($0) } ?? .null)
                out.append(row)
            }
        }
        return out
    }

    /// Rule 14, from its text: every event of the session labelled, the labels cut into runs of equal consecutive
    /// labels, the anchor's run the one holding the first event that matches the step, the path that run and the
    /// `depth` runs after (or before) it; `start` and `end` the first and last `depth` runs.
    func paths(_ p: BoundPaths, _ sessions: [Session]) -> [[Value]] {
        func label(_ e: Event) -> String {
            switch e.payload {
            case .analytics(let a):
                if let meta = e.meta, a == .screenPresented || a.name == "screen_completed" {
                    return a.name + "#" + String(meta.screenIndex)
                }
                return a.name
            case .openPaywall(let action), .custom(let action), .close(let action):
                return action == "" ? e.kind.rawValue : e.kind.rawValue + ":" + action
            default:
                return e.kind.rawValue
            }
        }
        var counts: [String: Int] = [:]
        var anchored = 0
        for s in sessions {
            let labels = s.events.map { label($0.event) }
            var runs: [(label: String, events: Range<Int>)] = []
            for (i, l) in labels.enumerated() {
                if let last = runs.last, last.label == l {
                    runs[runs.count - 1].events = last.events.lowerBound..<(i + 1)
                } else {
                    runs.append((l, i..<(i + 1)))
                }
            }
            guard !runs.isEmpty else { continue }
            let slice: [String]
            func anchorRun(_ step: BoundStep) -> Int? {
                let f = BoundFunnel(steps: [step], within: nil, mode: .ordered, ignoring: [], by: [])
                guard let first = s.events.indices.first(where: { isStep(f, 0, s.events[$0]) }) else { return nil }
                return runs.firstIndex { $0.events.contains(first) }
            }
            switch p.anchor {
            case .start:
                slice = runs[0..<min(p.depth, runs.count)].map(\.label)
            case .end:
                slice = runs[max(0, runs.count - p.depth)...].map(\.label)
            case .after(let step):
                guard let r = anchorRun(step) else { continue }
                slice = runs[r...min(r + p.depth, runs.count - 1)].map(\.label)
            case .before(let step):
                guard let r = anchorRun(step) else { continue }
                slice = runs[max(0, r - p.depth)...r].map(\.label)
            }
            anchored += 1
            counts[slice.joined(separator: " > "), default: 0] += 1
        }
        let ordered = counts.sorted { a, b in a.value > b.value || (a.value == b.value && a.key < b.key) }
        return ordered.map {
            [.string($0.key), .integer(Int64($0.value)), .number(Double($0.value) / Double(anchored))]
        }
    }

    func isStep(_ f: BoundFunnel, _ k: Int, _ r: Row) -> Bool {
        let step = f.steps[k]
        let e = r.event
        var named = e.kind.rawValue == step.event
        if case .analytics(let a) = e.payload, a.name == step.event { named = true }
        guard named else { return false }
        return step.predicate?.evaluate(
            now: now,
            { b in
                if case .event(let field) = b {
                    return eventField(field, Row(event: e, seq: r.seq, dwell: .null, censored: false))
                }
                return .null
            }
        ).isTrue ?? true
    }

    /// The best chain's positions (longest, then lexicographically smallest), by enumerating every chain; and
    /// the position the breakdown reads.
    func bestChain(_ f: BoundFunnel, _ events: [Row]) -> (chain: [Int], first: Int?, done: [Int64]) {
        let n = f.steps.count
        let window = f.within ?? Int64.max
        let matches = events.map { r in (0..<n).map { isStep(f, $0, r) } }
        func t(_ i: Int) -> Int64 { events[i].event.time.microseconds }
        func ignored(_ i: Int) -> Bool {
            let e = events[i].event
            if f.ignoring.contains(e.kind.rawValue) { return true }
            if case .analytics(let a) = e.payload { return f.ignoring.contains(a.name) }
            return false
        }
        if f.mode == .any {
            // Level k holds when steps 1…k each have an event inside one window; windows start at matching events.
            var best = 0
            var bestFirst: Int?
            var bestDone: [Int64] = []
            for anchor in events.indices where matches[anchor].contains(true) {
                let inside = events.indices.filter { t($0) >= t(anchor) && t($0) - t(anchor) <= window }
                var level = 0
                while level < n, inside.contains(where: { matches[$0][level] }) { level += 1 }
                if level > best {
                    best = level
                    bestFirst = inside.first { matches[$0][0] }
                    // Step k is done when steps 1…k have each happened once in the window.
                    bestDone = (0..<level).map { k in
                        (0...k).map { j in inside.filter { matches[$0][j] }.map(t).min()! }.max()!
                    }
                }
            }
            return (Array(repeating: 0, count: best), bestFirst, bestDone)
        }
        var best: [Int] = []
        func extend(_ chain: [Int]) {
            if chain.count > best.count || (chain.count == best.count && chain.lexicographicallyPrecedes(best)) {
                best = chain
            }
            guard chain.count < n, let last = chain.last else { return }
            for j in (last + 1)..<max(last + 1, events.count)
            where matches[j][chain.count] && t(j) - t(chain[0]) <= window {
                if f.mode == .strict, !((last + 1)..<j).allSatisfy(ignored) { continue }
                extend(chain + [j])
            }
        }
        for start in events.indices where matches[start][0] { extend([start]) }
        return (best, best.first, best.map(t))
    }

    // MARK: Table stages

    func tableStages(_ q: CheckedQuery, _ table: ResultTable) -> ResultTable {
        var t = table
        for stage in q.tableStages {
            switch stage {
            case .where(let p):
                t.rows = t.rows.filter { row in
                    p.evaluate(now: now) { b in if case .column(let i) = b { row[i] } else { .null } }.isTrue
                }
            case .limit(let n):
                t.rows = Array(t.rows.prefix(n))
            case .select(let cols):
                t.columns = cols.map(\.name)
                t.rows = t.rows.map { r in
                    cols.map { c in
                        c.bound.evaluate(now: now) { b in if case .column(let i) = b { r[i] } else { .null } }
                    }
                }
            case .reduce(let reduction, let columns):
                let rows: [Input] = t.rows.enumerated().map { (index, r) in
                    ({ b in if case .column(let i) = b { r[i] } else { .null } }, false, (0, index, ""), nil)
                }
                t = reduce(reduction, columns: columns, rows)
            case .versus(let v):
                t = versus(v, t) ?? ResultTable(columns: [Self.noBaseline], rows: [])
            case .sort(let keys):
                // Insertion sort: stable by construction.
                var rows = t.rows
                func before(_ a: [Value], _ b: [Value]) -> Bool {
                    for k in keys {
                        let x = a[k.column], y = b[k.column]
                        if x.isNull && y.isNull { continue }
                        if x.isNull { return false }
                        if y.isNull { return true }
                        if Value.sortsBefore(x, y) { return !k.descending }
                        if Value.sortsBefore(y, x) { return k.descending }
                    }
                    return false
                }
                for i in rows.indices {
                    var j = i
                    while j > 0, before(rows[j], rows[j - 1]) { rows.swapAt(j, j - 1); j -= 1 }
                }
                t.rows = rows
            }
        }
        return t
    }

    // MARK: Comparisons (rule 13)

    /// The one column of the reference's result when `versus` names a group the result does not have.
    static let noBaseline = "(no such group)"

    /// `versus`, from the rule's text: nil when no group has the baseline's key. Each measure is `hits` of `n`;
    /// the p-value is 2·P(Z > |z|) of the pooled statistic, through `erfc`.
    func versus(_ v: Versus, _ table: ResultTable) -> ResultTable? {
        func pValue(_ x1: Int, _ n1: Int, _ x2: Int, _ n2: Int) -> Double {
            let pooled = Double(x1 + x2) / Double(n1 + n2)
            let z =
                (Double(x1) / Double(n1) - Double(x2) / Double(n2))
                / (pooled * (1 - pooled) * (1 / Double(n1) + 1 / Double(n2))).squareRoot()
            return erfc(abs(z) / 2.0.squareRoot())
        }
        func compare(_ x: Int, _ n: Int, _ base: (Int, Int)?, baseline: Bool) -> [Value] {
            var row: [Value] = [
                .integer(Int64(n)), .integer(Int64(x)), n == 0 ? .null : .number(Double(x) / Double(n)),
            ]
            if baseline { return row + [.null, .null, .null, .string("baseline")] }
            guard let (bx, bn) = base else {
                return row + [.null, .null, .null, .string("the baseline has no such step")]
            }
            if bn == 0 || n == 0 { return row + [.null, .null, .null, .string("no sessions to compare")] }
            let r = Double(x) / Double(n)
            let b = Double(bx) / Double(bn)
            row += [.number(r - b), bx == 0 ? .null : .number((r - b) / b)]
            if [x, n - x, bx, bn - bx].contains(where: { $0 < 5 }) { return row + [.null, .string(Versus.tooFew)] }
            return row + [.number(pValue(x, n, bx, bn)), .null]
        }
        let isBase = { (row: [Value]) in Value.queryEqual(row[v.key], v.baseline) }
        var out: [[Value]] = []
        switch v.measures {
        case .rates(let rates, let rowsColumn):
            guard let base = table.rows.first(where: isBase) else { return nil }
            func hits(_ row: [Value], _ column: Int) -> Int {
                Int(((row[column].doubleValue ?? 0) * Double(row[rowsColumn].intValue ?? 0)).rounded())
            }
            for row in table.rows {
                for rate in rates {
                    let n = row[rowsColumn].intValue ?? 0
                    let b = (hits(base, rate.column), base[rowsColumn].intValue ?? 0)
                    out.append(
                        [row[v.key], .string(rate.name)] + compare(hits(row, rate.column), n, b, baseline: isBase(row)))
                }
            }
        case .funnel(let step, let name, let sessions):
            guard table.rows.contains(where: isBase) else { return nil }
            // A row's group is every row with its key; its first and previous steps are the group's rows before it.
            func measures(_ index: Int) -> (first: (Int, Int), previous: (Int, Int))? {
                let row = table.rows[index]
                let before = table.rows[..<index].filter { $0[v.key] == row[v.key] }
                guard let first = before.first, let previous = before.last else { return nil }
                let x = row[sessions].intValue ?? 0
                return ((x, first[sessions].intValue ?? 0), (x, previous[sessions].intValue ?? 0))
            }
            let baseIndex = { (s: Value) in
                table.rows.indices.first { isBase(table.rows[$0]) && table.rows[$0][step] == s }
            }
            for i in table.rows.indices {
                let row = table.rows[i]
                guard let m = measures(i) else { continue }
                let b = baseIndex(row[step]).flatMap(measures)
                let head = [row[v.key], row[step]] + (name.map { [row[$0]] } ?? [])
                out.append(
                    head + [.string("from_first")]
                        + compare(m.first.0, m.first.1, b.map { $0.first }, baseline: isBase(row)))
                out.append(
                    head + [.string("from_previous")]
                        + compare(m.previous.0, m.previous.1, b.map { $0.previous }, baseline: isBase(row)))
            }
        }
        return ResultTable(columns: v.columns, rows: out)
    }
}
