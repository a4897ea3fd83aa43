import BoardwalkCodec
import BoardwalkModel

/// What one ``Store/append(_:checkpoint:keepIdentical:)`` did.
public struct AppendResult: Hashable, Sendable {
    /// Events stored.
    public var appended: Int
    /// Events skipped because they are already stored (or came earlier in the same batch): the same event id, time,
    /// onboarding and screen; or, without an event id, the same time, onboarding, screen and content (see
    /// ``Store/append(_:checkpoint:keepIdentical:)``).
    public var duplicates: Int
    /// The seqs given to the stored events: consecutive, in the order of the input (empty when none).
    public var seqs: Range<UInt64>
}
