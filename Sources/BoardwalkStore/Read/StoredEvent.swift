import BoardwalkCodec
import BoardwalkModel

/// An owned stored event: its arrival sequence number and the event.
public struct StoredEvent: Hashable, Sendable {
    /// The event's arrival sequence number.
    public var seq: UInt64
    /// The event as stored (an inferred session appears as `inferred:<seq>`).
    public var event: Event

    /// A stored event from its parts.
    public init(seq: UInt64, event: Event) {
        self.seq = seq
        self.event = event
    }
}
