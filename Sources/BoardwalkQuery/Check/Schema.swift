/// The static type of an expression.
enum QueryType: Hashable, Sendable, CustomStringConvertible {
    case string, number, bool, duration, time
    /// An answer or label: a string, a number or a set, known only per row.
    case answer

    var description: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "boolean"
        case .duration: "duration"
        case .time: "timestamp"
        case .answer: "answer"
        }
    }

    /// With an article, for messages: "a string", "an answer".
    var withArticle: String {
        switch self {
        case .answer: "an answer"
        default: "a \(description)"
        }
    }
}

/// The fields of `events` rows.
public enum EventField: String, CaseIterable, Hashable, Sendable {
    case time, seq, kind, name, onboarding, screen
    case screenCID = "screen_cid"
    case totalScreens = "total_screens"
    case session, profile, action, element
    case elementType = "element_type"
    case reply, value, label, placement, variation
    case eventID = "event_id"
    case dwell
    /// A select's option id, or a multi-select's set of them.
    case option
    /// An input's type: `text`, `email` or `number`.
    case inputType = "input_type"
    case errorDomain = "error_domain"
    case errorCode = "error_code"
    case errorMessage = "error_message"

    var type: QueryType {
        switch self {
        case .time: .time
        case .seq, .screen, .totalScreens, .errorCode: .number
        case .value, .label, .option: .answer
        case .dwell: .duration
        default: .string
        }
    }
}

/// The fields of `sessions` rows.
package enum SessionField: String, CaseIterable, Hashable, Sendable {
    case session, profile, onboarding, placement, variation, started, ended, duration, events
    case furthestScreen = "furthest_screen"
    case lastScreen = "last_screen"
    case totalScreens = "total_screens"
    case completed, paywall, closed
    case emailCollected = "email_collected"
    case exit

    var type: QueryType {
        switch self {
        case .started, .ended: .time
        case .duration: .duration
        case .events, .furthestScreen, .lastScreen, .totalScreens: .number
        case .completed, .paywall, .closed, .emailCollected: .bool
        default: .string
        }
    }
}

/// Session outcomes (rule 8), the values of `exit`.
enum Exit: String, CaseIterable {
    case completed, paywall, closed, error, abandoned
}

/// The aggregates of `stats`.
enum AggregateFunction: Hashable, Sendable {
    /// `count()`: rows.
    case count
    /// `count(f)`: rows where `f` is present.
    case countPresent
    case countDistinct
    case sum, avg, min, max
    /// `p50`…`p99`, `percentile(f, q)`: q in 0...1.
    case percentile(Double)
    /// `rate(predicate)`: the fraction of rows where the predicate holds.
    case rate
    /// One end of `ci(predicate, level)`: the Wilson score interval of the rate at the confidence level (0…1,
    /// exclusive); `ci` gives two columns, the low end and the high end.
    case ciLow(Double), ciHigh(Double)

    static let names = [
        "count", "count_distinct", "sum", "avg", "min", "max", "p50", "p90", "p95", "p99",
        "percentile", "rate", "ci",
    ]

    /// Count-like aggregates report 0, not absent, over no rows (rule 11).
    var isCountLike: Bool {
        switch self {
        case .count, .countPresent, .countDistinct, .sum: true
        default: false
        }
    }
}

/// Function names callable in expressions, by source.
enum Functions {
    static let buckets = TimeUnit.allCases.map(\.rawValue)
    /// Functions of a time that are not buckets.
    static let times = ["year"]
    static let session = ["answer", "did", "reached", "now"] + buckets + times
    static let events = ["now"] + buckets + times
}
