import BoardwalkModel

/// Why an event could not be encoded.
///
/// Encoding fails only for events outside the model's documented domain (a screen index outside
/// `0...Meta.maxScreenIndex`) or for string ids an interner may not hand out. Errors thrown by a
/// ``StringInterner`` itself are rethrown unchanged.
public struct EncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public var reason: Reason

    /// The kinds of unencodable event.
    public enum Reason: Hashable, Sendable {
        /// `meta.screenIndex` is outside `0...Meta.maxScreenIndex`.
        case screenIndexOutOfRange(Int)
        /// The interner returned `UInt32.max`, which the format keeps for "no string".
        case reservedStringID
        /// The record would exceed ``RecordFormat/maxRecordLength`` (a multi-select of about a million choices).
        case recordTooLong(Int)
        /// The time (microseconds since the epoch) is outside `Timestamp.range`.
        case timeOutOfRange(Int64)
        /// `meta.totalScreens` is outside `0...Meta.maxScreenIndex + 1`.
        case totalScreensOutOfRange(Int)
        /// A string longer than ``RecordFormat/maxStringBytes`` UTF-8 bytes, in the named field.
        case stringTooLong(field: String, bytes: Int)
        /// A multi-select with more than ``RecordFormat/maxChoices`` choices.
        case tooManyChoices(Int)
        /// The event's NDJSON line would be longer than the reader's limit (`atLeast`: its strings' bytes as JSON).
        case lineTooLong(atLeast: Int, limit: Int)
    }

    /// An error for `reason`.
    @inlinable
    public init(_ reason: Reason) { self.reason = reason }

    /// The reason in words.
    public var description: String {
        switch reason {
        case .screenIndexOutOfRange(let i): "cannot encode screen index \(i): outside 0...\(Meta.maxScreenIndex)"
        case .reservedStringID: "the string interner returned the reserved id 0xFFFFFFFF"
        case .recordTooLong(let n): "record of \(n) bytes exceeds the limit of \(RecordFormat.maxRecordLength)"
        case .timeOutOfRange(let t): "time \(t) µs since the epoch is outside years 1970 through 9999"
        case .totalScreensOutOfRange(let n): "total screens \(n) is outside 0...\(Meta.maxScreenIndex + 1)"
        case .stringTooLong(let field, let n):
            "\(field) is \(n) bytes long; the limit is \(RecordFormat.maxStringBytes)"
        case .tooManyChoices(let n): "a multi-select of \(n) choices; the limit is \(RecordFormat.maxChoices)"
        case .lineTooLong(let n, let limit):
            "its strings take \(n) bytes as JSON, too long for an NDJSON line of at most \(limit)"
        }
    }
}
