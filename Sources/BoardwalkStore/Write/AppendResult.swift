import BoardwalkCodec
import BoardwalkModel

/// What one ``Store/append(_:checkpoint:)`` did.
public struct AppendResult: Hashable, Sendable {
    /// Events stored.
    public var appended: Int
    /// Events skipped because an event with the same event id, time, onboarding and screen is already
    /// stored (or came earlier in the same batch).
    public var duplicates: Int
    /// The seqs given to the stored events: consecutive, in the order of the input (empty when none).
    public var seqs: Range<UInt64>
}
