import BoardwalkModel

/// The fields a store key carries, which a record body omits: time, onboarding and screen index.
///
/// ``RecordEncoder/appendBody(_:strings:)`` returns it so the caller can build the key;
/// ``RecordView/init(body:header:stringLimit:)`` takes it back to decode the body. An event without
/// `meta` (an error outside the page) has `onboarding == nil` and `screenIndex == nil`; a store keys it
/// with ``RecordFormat/noOnboarding`` and ``RecordFormat/noScreen``.
public struct RecordHeader: Hashable, Sendable {
    /// When the event happened.
    public var time: Timestamp
    /// The interned onboarding id, or `nil` when the event has no `meta`.
    public var onboarding: StringID?
    /// The screen index, `0...Meta.maxScreenIndex`, or `nil` when the event has no `meta`.
    public var screenIndex: UInt16?

    /// A header; pass `nil` for both `onboarding` and `screenIndex` for an event without `meta`.
    @inlinable
    public init(time: Timestamp, onboarding: StringID?, screenIndex: UInt16?) {
        self.time = time
        self.onboarding = onboarding
        self.screenIndex = screenIndex
    }

    /// Whether the event has `meta` (both ``onboarding`` and ``screenIndex`` are set).
    @inlinable
    public var hasMeta: Bool { onboarding != nil && screenIndex != nil }

    /// The header from the fixed-width values of a store key, where ``RecordFormat/noOnboarding`` means "no meta".
    @inlinable
    public init(time: Timestamp, keyOnboarding: StringID, keyScreenIndex: UInt16) {
        self.time = time
        if keyOnboarding == RecordFormat.noOnboarding {
            onboarding = nil
            screenIndex = nil
        } else {
            onboarding = keyOnboarding
            screenIndex = keyScreenIndex
        }
    }

    /// The onboarding for a fixed-width key: the id, or ``RecordFormat/noOnboarding``.
    @inlinable
    public var keyOnboarding: StringID { onboarding ?? RecordFormat.noOnboarding }

    /// The screen index for a fixed-width key: the index, or ``RecordFormat/noScreen``.
    @inlinable
    public var keyScreenIndex: UInt16 { screenIndex ?? RecordFormat.noScreen }
}

/// Where an encoded record sits in the encoder's buffer, and the key fields it was encoded with.
public struct EncodedRecord: Hashable, Sendable {
    /// Time, onboarding and screen index (what a store key carries).
    public var header: RecordHeader
    /// The interned session id, if the event has one (what the store's session index carries).
    public var session: StringID?
    /// The interned profile id, if the event has one (what the store's `session_names` index carries).
    public var profile: StringID?
    /// The record's bytes in ``RecordEncoder/bytes``.
    public var range: Range<Int>

    @inlinable
    init(header: RecordHeader, session: StringID?, profile: StringID?, range: Range<Int>) {
        self.header = header
        self.session = session
        self.profile = profile
        self.range = range
    }
}
