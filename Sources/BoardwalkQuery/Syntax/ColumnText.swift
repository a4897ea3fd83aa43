/// The text of a query expression as a column name: whitespace outside string literals left out, except that one
/// space stays between two words, so that `p50( duration )` is `p50(duration)`, `percentile(dwell, 0.25)` is
/// `percentile(dwell,0.25)`, and `rate(paywall and not completed)` keeps its spaces instead of running its words
/// together. Stages that name a column by an expression (`sort p50(duration)`) find it by the same text.
func columnText(_ bytes: some Collection<UInt8>) -> String {
    func isWord(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c >= 0x80
    }
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var inString = false, space = false
    for c in bytes {
        if !inString, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
            space = true
            continue
        }
        if space, !inString, let last = out.last, isWord(last), isWord(c) { out.append(0x20) }
        space = false
        if c == UInt8(ascii: "\"") { inString.toggle() }
        out.append(c)
    }
    return String(decoding: out, as: UTF8.self)
}
