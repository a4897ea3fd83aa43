import BoardwalkCodec
import BoardwalkModel

/// One stored event, borrowed: its seq and the codec's ``RecordView`` of its record, whose strings are
/// ``StringID``s. Valid only inside the scan callback that received it.
public struct EventView {
    /// The event's arrival sequence number.
    public let seq: UInt64
    /// The decoded record (time, onboarding and screen come from the store key).
    public let record: RecordView

    /// When the event happened.
    @inlinable public var time: Timestamp { record.time }
    /// The event's kind.
    @inlinable public var kind: EventKind { record.kind }
    /// The interned onboarding id, `nil` for an event without `meta`.
    @inlinable public var onboarding: StringID? { record.onboarding }
    /// The screen index, `nil` for an event without `meta`.
    @inlinable public var screenIndex: Int? { record.screenIndex }
    /// The interned session id (given, or inferred at append).
    @inlinable public var session: StringID? { record.session }
}
