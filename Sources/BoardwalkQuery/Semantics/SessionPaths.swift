import BoardwalkModel

/// `paths`: each session's short sequence of events around an anchor, counted per distinct sequence
/// (semantics rule 14).
struct BoundPaths: Hashable, Sendable {
    /// Where a session's path is taken.
    enum Anchor: Hashable, Sendable {
        /// The session's first event matching the step, and the steps after it.
        case after(BoundStep)
        /// The session's first event matching the step, and the steps before it.
        case before(BoundStep)
        /// The session's first steps.
        case start
        /// The session's last steps.
        case end
    }

    var anchor: Anchor
    /// The steps besides the anchor (``defaultDepth`` when not given; 1 to ``maxDepth``).
    var depth: Int

    static let defaultDepth = 3
    /// Each step multiplies the distinct paths: on the demo store (5 016 sessions) the paths before `end` number 191
    /// at depth 3, 40 of them one session's, and 549 at depth 10, 249 of them one session's.
    static let maxDepth = 10
    /// What joins a path's steps in the `path` column.
    static let separator = " > "
    static let columns: [(name: String, type: QueryType)] = [
        ("path", .string), ("sessions", .number), ("share", .number),
    ]

    /// An event as a step of a path: its name (the analytics name, else the kind), with `#` and the screen index
    /// for `screen_presented` and `screen_completed`, and `:` and the action id (when not empty) for `open_paywall`,
    /// `custom` and `close`.
    static func label(_ row: some EventRow) -> String {
        switch row.kind {
        case .analytics:
            let name = row.analyticsName ?? ""
            if name == AnalyticsName.screenPresented.rawValue || name == AnalyticsName.screenCompleted.rawValue,
                let screen = row.screenIndex
            {
                return "\(name)#\(screen)"
            }
            return name
        case .openPaywall, .custom, .close:
            if case .string(let action) = row.value(.action), !action.isEmpty {
                return "\(row.kind.rawValue):\(action)"
            }
            return row.kind.rawValue
        default:
            return row.kind.rawValue
        }
    }

    /// Whether `row` is the anchor's step: its event, and its condition when it has one.
    private static func matches(_ row: some EventRow, _ step: BoundStep, now: Timestamp) -> Bool {
        guard row.isEvent(step.event) else { return false }
        guard let predicate = step.predicate else { return true }
        return predicate.evaluate(now: now) { leaf in
            if case .event(let f) = leaf { return row.value(f) }
            return .null
        }.isTrue
    }

    /// The path of a session whose events are `events`, in `(time, seq)` order: its events' labels with
    /// consecutive repeats collapsed to one, the anchor's and up to ``depth`` more on the anchor's side (fewer when
    /// the session ends or starts first); nil when the session has no anchor (no event, or none matching the step).
    /// - Complexity: O(n) for n events; memory O(depth) labels.
    func path<R: EventRow>(_ events: [R], now: Timestamp) -> [String]? {
        var labels: [String] = []
        switch anchor {
        case .start, .after:
            var anchored = false
            if case .start = anchor { anchored = true }
            for row in events {
                if !anchored, case .after(let step) = anchor, BoundPaths.matches(row, step, now: now) {
                    anchored = true
                }
                guard anchored else { continue }
                let l = BoundPaths.label(row)
                if labels.last != l {
                    // The anchor counts as the first step only for `after`; `start` has no anchor event.
                    if case .start = anchor, labels.count == depth { break }
                    if case .after = anchor, labels.count == depth + 1 { break }
                    labels.append(l)
                }
            }
            return labels.isEmpty ? nil : labels
        case .end:
            for row in events {
                let l = BoundPaths.label(row)
                if labels.last != l { keepLast(l, &labels) }
            }
            return labels.isEmpty ? nil : Array(labels.suffix(depth))
        case .before(let step):
            for row in events {
                let l = BoundPaths.label(row)
                if labels.last != l { keepLast(l, &labels) }
                // The anchor's run is the one it joins: a repeat of the label before it collapses into it.
                if BoundPaths.matches(row, step, now: now) { return Array(labels.suffix(depth + 1)) }
            }
            return nil
        }
    }

    /// Appends `label`, keeping only the last `depth + 1` labels (cut in bulk, so each label is moved once): runs are
    /// told apart by the last label alone, and a path never holds more.
    private func keepLast(_ label: String, _ labels: inout [String]) {
        labels.append(label)
        if labels.count > 2 * (depth + 1) { labels.removeFirst(labels.count - (depth + 1)) }
    }

    /// The anchor as `explain` describes it.
    var description: String {
        switch anchor {
        case .after(let s): "paths after \(s.name), depth \(depth)"
        case .before(let s): "paths before \(s.name), depth \(depth)"
        case .start: "paths after start, depth \(depth)"
        case .end: "paths before end, depth \(depth)"
        }
    }
}
