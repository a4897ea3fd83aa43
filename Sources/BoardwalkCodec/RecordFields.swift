import BoardwalkModel

/// The fields of a record body that a scan folds into sessions, read without decoding or validating the rest:
/// the cheap path beside ``RecordView``.
///
/// ``RecordView`` validates every byte of a record and decodes every field; a query that folds millions of
/// events into per-session summaries reads only a few of them. `RecordFields` reads the tag and flags, the
/// `meta` fields (total screens; the screen's client id is skipped), the session, profile, placement and
/// variation references (the event id is skipped), and the one kind-specific field a fold classifies events
/// by: an analytics event's name byte (with an unknown name's reference, or `screen_completed`'s element and
/// reply), a state update's element reference and value type, an action's id. Nothing after that is read.
///
/// What it checks: every read is bounds-checked and every varint it reads is well-formed; the tag's version
/// and kind, the flags' reserved bits, the body's `meta` flag against the header, the analytics name code
/// and every reference it reads (below `stringLimit`). Any of these throws a ``CodecError`` at the byte
/// where it was found, as ``RecordView`` would. What it does not check: the values it skips (the screen's
/// client id and an interned event id are read as references, a UUID skipped as 16 bytes, and the rest of the
/// kind-specific payload is not read at all) and that the body ends where the fields do. Damage there can go
/// unnoticed, and a damaged length bit in an earlier field can even shift the fields after it, so that other
/// (valid-looking) values are read; ``RecordView`` and the store's `check()` report such records. Two records
/// that ``RecordView`` accepts give the same values through both types.
///
/// With ``Extent/session`` it stops after the session reference: a fold that needs only each event's time,
/// screen, total screens and session (a screen funnel) reads a handful of bytes per event.
///
/// ```swift
/// let fields = try RecordFields(body: reader.body, header: header, stringLimit: stringCount)
/// if fields.kind == .analytics, fields.knownAnalyticsName == .screenPresented { … }
/// ```
/// - Complexity: O(the fields read), no allocation; a few dozen instructions for a typical event.
@usableFromInline
package struct RecordFields {
    /// When the event happened, in microseconds since the epoch (from the header).
    @usableFromInline package let timeMicroseconds: Int64
    /// The onboarding id from the header, ``RecordFormat/absent`` without `meta`.
    @usableFromInline let onboardingRef: UInt32
    @usableFromInline let screen: UInt16
    /// The screen's client id (`meta.screen_cid`), ``RecordFormat/absent`` without `meta`.
    @usableFromInline package let screenClientRef: UInt32
    /// The event's kind.
    @usableFromInline package let kind: EventKind
    @usableFromInline let flags: UInt8
    /// For analytics: the name byte; for a state update: the value type byte; else 0.
    @usableFromInline let sub: UInt8
    @usableFromInline let total: Int64
    @usableFromInline let sessionRef: UInt32
    @usableFromInline let profileRef: UInt32
    @usableFromInline let placementRef: UInt32
    @usableFromInline let variationRef: UInt32
    /// Analytics: an unknown name's reference; state update: the element; action: the action id.
    @usableFromInline let r0: UInt32
    /// Analytics (`screen_completed`): the element and the reply.
    @usableFromInline let r1: UInt32
    @usableFromInline let r2: UInt32
    /// How much of the record was read: with ``Extent/session``, the fields after the session are absent.
    @usableFromInline package let extent: Extent

    /// Reads the fields of the record body that fills `bytes`, with time, onboarding and screen index from
    /// `header` (the store key).
    ///
    /// - Parameters:
    ///   - bytes: the body, as ``RecordEncoder/appendBody(_:strings:)`` writes it.
    ///   - header: the fields the key carries.
    ///   - stringLimit: every reference read must be below this (the number of strings of the dictionary).
    ///   - extent: ``Extent/session`` stops after the session reference.
    /// - Throws: ``CodecError`` with the offset in `bytes` for truncated or malformed fields it reads (see the
    ///   type's discussion for what it skips); ``CodecError/Reason/contextMismatch`` when the body's `meta`
    ///   flag disagrees with `header`.
    @inlinable @inline(__always)
    package init(
        body bytes: UnsafeRawBufferPointer, header: RecordHeader,
        stringLimit limit: StringID = RecordFormat.absent, extent: Extent = .all
    ) throws(CodecError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw CodecError(offset: 0, reason: .truncated) }
        var r = ByteReader(base: base, position: 0, end: bytes.count)
        let tag = try r.byte()
        guard Int(tag >> RecordFormat.versionShift) == RecordFormat.version else {
            throw CodecError(offset: 0, reason: .unsupportedVersion(Int(tag >> RecordFormat.versionShift)))
        }
        guard let kind = EventKind(code: tag & RecordFormat.kindMask) else {
            throw CodecError(offset: 0, reason: .unknownKind(tag & RecordFormat.kindMask))
        }
        let flags = try r.varint()
        guard flags & ~RecordFormat.flagsDefined == 0 else {
            throw CodecError(offset: 1, reason: .reservedBits(field: "flags", value: flags))
        }
        let hasMeta = flags & RecordFormat.flagMeta != 0
        guard header.hasMeta == hasMeta else { throw CodecError(offset: 1, reason: .contextMismatch) }
        var total: Int64 = 0
        var screen = RecordFormat.noScreen
        var screenClient = RecordFormat.absent
        if hasMeta, let s = header.screenIndex {
            guard Int(s) <= Meta.maxScreenIndex else {
                throw CodecError(offset: 0, reason: .invalidValue(field: "screen index", value: Int64(s)))
            }
            screen = s
            // Read as a reference (below the string count): a damaged byte here is more often caught than
            // passed on as a shift of every field after it.
            screenClient = try r.ref(limit: limit)
            total = try r.signed()
        }
        let absent = RecordFormat.absent
        var session = absent, profile = absent, placement = absent, variation = absent
        if flags & RecordFormat.flagSession != 0 { session = try r.refLikelyThreeBytes(limit: limit) }
        var sub: UInt8 = 0
        var r0 = absent, r1 = absent, r2 = absent
        if extent == .all {
            if flags & RecordFormat.flagProfile != 0 { profile = try r.ref(limit: limit) }
            switch (flags >> RecordFormat.eventIDShift) & 3 {
            case 0: break
            case 1: _ = try r.ref(limit: limit)  // an interned event id
            default: try r.skip(16)  // a UUID
            }
            if flags & RecordFormat.flagPlacement != 0 { placement = try r.ref(limit: limit) }
            if flags & RecordFormat.flagVariation != 0 { variation = try r.ref(limit: limit) }

            switch kind {
            case .analytics:
                // The same checks as `RecordView.parse`, written out again on purpose: one shared function cost
                // the full view's decode 7–12 % more instructions (callgrind), whichever way it returned.
                let subOffset = r.position
                sub = try r.byte()
                let code = sub & 0x0F
                if code == RecordFormat.analyticsUnknown {
                    guard sub & 0xF0 == 0 else {
                        throw CodecError(
                            offset: subOffset, reason: .reservedBits(field: "analytics", value: UInt64(sub)))
                    }
                    r0 = try r.ref(limit: limit)
                } else {
                    guard code <= 7 else {
                        throw CodecError(
                            offset: subOffset, reason: .invalidValue(field: "analytics name code", value: Int64(code)))
                    }
                    let allowed: UInt8 =
                        code == AnalyticsName.screenCompleted.code
                        ? RecordFormat.analyticsHasElement | RecordFormat.analyticsHasReply : 0
                    guard sub & 0xF0 & ~allowed == 0 else {
                        throw CodecError(
                            offset: subOffset, reason: .reservedBits(field: "analytics", value: UInt64(sub)))
                    }
                    if sub & RecordFormat.analyticsHasElement != 0 { r1 = try r.ref(limit: limit) }
                    if sub & RecordFormat.analyticsHasReply != 0 { r2 = try r.ref(limit: limit) }
                }
            case .stateUpdated:
                r0 = try r.ref(limit: limit)
                let subOffset = r.position
                sub = try r.byte()
                let type = sub & 0x0F
                let dateBits = RecordFormat.dateHasYear | RecordFormat.dateHasMonth | RecordFormat.dateHasDay
                guard sub & ~(0x0F | (type == RecordFormat.valueDate ? dateBits : 0)) == 0 else {
                    throw CodecError(offset: subOffset, reason: .reservedBits(field: "state value", value: UInt64(sub)))
                }
                guard type <= RecordFormat.valueDate else {
                    throw CodecError(
                        offset: subOffset, reason: .invalidValue(field: "state value type", value: Int64(type)))
                }
            case .openPaywall, .custom, .close:
                r0 = try r.ref(limit: limit)
            case .onboardingLoaded, .error:
                break
            }
        }
        timeMicroseconds = header.time.microseconds
        onboardingRef = hasMeta ? header.onboarding ?? absent : absent
        self.screen = screen
        screenClientRef = screenClient
        self.kind = kind
        self.flags = UInt8(truncatingIfNeeded: flags)
        self.sub = sub
        sessionRef = session
        profileRef = profile
        placementRef = placement
        variationRef = variation
        self.total = total
        self.r0 = r0
        self.r1 = r1
        self.r2 = r2
        self.extent = extent
    }

    /// How much of a record ``RecordFields`` reads.
    @usableFromInline
    package enum Extent: Sendable {
        /// Everything up to the session reference: kind, `meta` (total screens) and the session; with the
        /// header, what a fold of a session's screens needs. Profile, placement, variation and the
        /// kind-specific fields are then absent (`nil`), whatever the record holds.
        case session
        /// Every field this type exposes.
        case all
    }
}

extension RecordFields {
    @inlinable @inline(__always)
    func optional(_ ref: UInt32) -> StringID? { ref == RecordFormat.absent ? nil : ref }

    /// When the event happened.
    @inlinable package var time: Timestamp { Timestamp(microseconds: timeMicroseconds) }
    /// Whether the event has `meta` (onboarding, screen, total screens).
    @inlinable package var hasMeta: Bool { flags & UInt8(RecordFormat.flagMeta) != 0 }
    /// The onboarding id; `nil` without `meta`.
    @inlinable package var onboarding: StringID? { hasMeta ? onboardingRef : nil }
    /// The 0-based screen index; `nil` without `meta`.
    @inlinable package var screenIndex: Int? { hasMeta ? Int(screen) : nil }
    /// The screen's client id (`meta.screen_cid`); `nil` without `meta`.
    @inlinable package var screenClientID: StringID? { hasMeta ? screenClientRef : nil }
    /// How many screens the onboarding has; `nil` without `meta`.
    @inlinable package var totalScreens: Int? { hasMeta ? Int(truncatingIfNeeded: total) : nil }
    /// The session id, if any.
    @inlinable package var session: StringID? { optional(sessionRef) }
    /// The profile id, if any.
    @inlinable package var profile: StringID? { optional(profileRef) }
    /// The placement, if any.
    @inlinable package var placement: StringID? { optional(placementRef) }
    /// The variation, if any.
    @inlinable package var variation: StringID? { optional(variationRef) }

    /// The analytics name of an analytics event; `nil` for other kinds.
    @inlinable
    package var analyticsName: AnalyticsNameRef? {
        guard kind == .analytics, extent == .all else { return nil }
        let code = sub & 0x0F
        if code == RecordFormat.analyticsUnknown { return .unknown(r0) }
        return AnalyticsName(code: code).map { .known($0) }
    }

    /// The known analytics name; `nil` for other kinds and for unknown names.
    @inlinable
    package var knownAnalyticsName: AnalyticsName? {
        kind == .analytics && extent == .all ? AnalyticsName(code: sub & 0x0F) : nil
    }

    /// The element: `screen_completed`'s `element_id` or a state update's element id.
    @inlinable
    package var elementID: StringID? {
        switch kind {
        case .analytics: optional(r1)
        case .stateUpdated: optional(r0)  // absent only when not read (``Extent/session``)
        default: nil
        }
    }

    /// `screen_completed`'s reply, if any.
    @inlinable
    package var reply: StringID? { kind == .analytics ? optional(r2) : nil }

    /// The action id of an open-paywall, custom or close action.
    @inlinable
    package var actionID: StringID? {
        switch kind {
        case .openPaywall, .custom, .close: optional(r0)
        default: nil
        }
    }

    /// A state update's element type.
    @inlinable
    package var elementType: ElementType? {
        guard kind == .stateUpdated, extent == .all else { return nil }
        switch sub & 0x0F {
        case RecordFormat.valueSelect: return .select
        case RecordFormat.valueMultiSelect: return .multiSelect
        case RecordFormat.valueDate: return .datePicker
        default: return .input
        }
    }
}
