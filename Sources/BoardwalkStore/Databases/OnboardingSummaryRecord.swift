import BoardwalkCodec
import BoardwalkModel

/// The decoded value of an `onboardings` entry.
struct OnboardingSummaryRecord {
    static let size = 28
    var events: UInt64
    var minTime: Int64
    var maxTime: Int64
    var maxTotalScreens: UInt32

    init(_ v: UnsafeRawBufferPointer) throws {
        guard v.count == OnboardingSummaryRecord.size else {
            throw StoreError(.corrupt, "an onboardings entry is \(v.count) bytes, not \(OnboardingSummaryRecord.size)")
        }
        events = v.be64(0)
        minTime = Layout.time(fromBits: v.be64(8))
        maxTime = Layout.time(fromBits: v.be64(16))
        maxTotalScreens = v.be32(24)
    }
}
