import BoardwalkModel

/// Constants of the record format (see `docs/codec.md` for the byte-by-byte layout).
public enum RecordFormat {
    /// The record format version this module writes and reads. Kept in the top three bits of a record's tag.
    @inlinable public static var version: Int { 1 }
    /// The id that means "no string" inside the codec; never a valid ``StringID``.
    @inlinable public static var absent: StringID { .max }
    /// The onboarding id a store key should use for an event without `meta` (``BoardwalkModel/Payload/error(_:)``).
    @inlinable public static var noOnboarding: StringID { .max }
    /// The screen index a store key should use for an event without `meta`; one above `Meta.maxScreenIndex`.
    @inlinable public static var noScreen: UInt16 { .max }
    /// The longest record (after its length prefix) a reader accepts: 16 MiB. A record is tens of bytes; the
    /// limit bounds what a corrupt length prefix can make a reader skip or buffer.
    @inlinable public static var maxRecordLength: Int { 1 << 24 }
    /// The longest string (UTF-8 bytes), the most choices of a multi-select and the longest NDJSON line of an event
    /// the store takes at append: what the NDJSON reader accepts by default (`JSONReaderLimits`; a CLI test checks
    /// that they agree), so that every stored event can be exported and read back. The record format holds more.
    @inlinable package static var maxStringBytes: Int { 64 << 10 }
    @inlinable package static var maxChoices: Int { 1000 }
    @inlinable package static var maxLineBytes: Int { 1 << 20 }

    // Tag byte: version << 5 | kind.
    @inlinable static var kindMask: UInt8 { 0x1F }
    @inlinable static var versionShift: UInt8 { 5 }

    // Kind codes, in `EventKind.allCases` order.
    @inlinable static var kindAnalytics: UInt8 { 0 }
    @inlinable static var kindStateUpdated: UInt8 { 1 }
    @inlinable static var kindOpenPaywall: UInt8 { 2 }
    @inlinable static var kindCustom: UInt8 { 3 }
    @inlinable static var kindClose: UInt8 { 4 }
    @inlinable static var kindOnboardingLoaded: UInt8 { 5 }
    @inlinable static var kindError: UInt8 { 6 }

    // Flags varint.
    @inlinable static var flagSession: UInt64 { 1 << 0 }
    @inlinable static var flagProfile: UInt64 { 1 << 1 }
    @inlinable static var eventIDShift: UInt64 { 2 }  // two bits: 0 none, 1 ref, 2 UUID lower, 3 UUID upper
    @inlinable static var flagPlacement: UInt64 { 1 << 4 }
    @inlinable static var flagVariation: UInt64 { 1 << 5 }
    @inlinable static var flagMeta: UInt64 { 1 << 6 }
    @inlinable static var flagsDefined: UInt64 { 0x7F }

    // Analytics byte: name code in bits 0-3, element id and reply presence in bits 4 and 5.
    @inlinable static var analyticsUnknown: UInt8 { 15 }
    @inlinable static var analyticsHasElement: UInt8 { 1 << 4 }
    @inlinable static var analyticsHasReply: UInt8 { 1 << 5 }

    // State value byte: type in bits 0-2, date part presence in bits 4-6 (year, month, day).
    @inlinable static var valueSelect: UInt8 { 0 }
    @inlinable static var valueMultiSelect: UInt8 { 1 }
    @inlinable static var valueText: UInt8 { 2 }
    @inlinable static var valueEmail: UInt8 { 3 }
    @inlinable static var valueNumber: UInt8 { 4 }
    @inlinable static var valueDate: UInt8 { 5 }
    @inlinable static var dateHasYear: UInt8 { 1 << 4 }
    @inlinable static var dateHasMonth: UInt8 { 1 << 5 }
    @inlinable static var dateHasDay: UInt8 { 1 << 6 }
}

extension EventKind {
    /// The kind's code in a record's tag byte: 0 to 6, in `EventKind.allCases` order.
    @inlinable
    public var code: UInt8 {
        switch self {
        case .analytics: RecordFormat.kindAnalytics
        case .stateUpdated: RecordFormat.kindStateUpdated
        case .openPaywall: RecordFormat.kindOpenPaywall
        case .custom: RecordFormat.kindCustom
        case .close: RecordFormat.kindClose
        case .onboardingLoaded: RecordFormat.kindOnboardingLoaded
        case .error: RecordFormat.kindError
        }
    }

    /// The kind of a record's kind code; nil for a code no kind has.
    @inlinable @inline(__always)
    public init?(code: UInt8) {
        switch code {
        case RecordFormat.kindAnalytics: self = .analytics
        case RecordFormat.kindStateUpdated: self = .stateUpdated
        case RecordFormat.kindOpenPaywall: self = .openPaywall
        case RecordFormat.kindCustom: self = .custom
        case RecordFormat.kindClose: self = .close
        case RecordFormat.kindOnboardingLoaded: self = .onboardingLoaded
        case RecordFormat.kindError: self = .error
        default: return nil
        }
    }
}

extension AnalyticsName {
    /// The name's code in a record's analytics byte (its position in `allCases`).
    @inlinable
    public var code: UInt8 {
        switch self {
        case .onboardingStarted: 0
        case .screenPresented: 1
        case .screenCompleted: 2
        case .secondScreenPresented: 3
        case .registrationScreenPresented: 4
        case .productsScreenPresented: 5
        case .userEmailCollected: 6
        case .onboardingCompleted: 7
        }
    }

    /// The name of a record's analytics name code; nil for a code no known name has.
    @inlinable
    public init?(code: UInt8) {
        switch code {
        case 0: self = .onboardingStarted
        case 1: self = .screenPresented
        case 2: self = .screenCompleted
        case 3: self = .secondScreenPresented
        case 4: self = .registrationScreenPresented
        case 5: self = .productsScreenPresented
        case 6: self = .userEmailCollected
        case 7: self = .onboardingCompleted
        default: return nil
        }
    }
}

/// Zig-zag: small magnitudes of either sign become small unsigned numbers (0, -1, 1, -2 → 0, 1, 2, 3).
@inlinable @inline(__always)
package func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v &<< 1) ^ (v &>> 63)) }

@inlinable @inline(__always)
package func unzigzag(_ u: UInt64) -> Int64 { Int64(bitPattern: (u &>> 1) ^ (0 &- (u & 1))) }

/// The number of bytes of `v` as a varint (1...10).
@inlinable @inline(__always)
package func varintSize(_ v: UInt64) -> Int {
    // 1 + floor(bits / 7), with bits = 64 - leadingZeros, for v > 0.
    let bits = 64 - (v | 1).leadingZeroBitCount
    return (bits + 6) / 7
}
