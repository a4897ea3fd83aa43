// Terminal width of text, shared by the query's tables and diagnostics and the command line's own tables.

/// How many terminal columns `s` takes.
///
/// Each grapheme cluster (what a terminal draws as one glyph) counts once, as wide as its widest scalar: East
/// Asian wide characters and emoji shown as emoji take two columns, combining marks and joiners none, so `é`
/// written with U+0301 takes one and a family joined with U+200D (👨‍👩‍👧) two, not six.
/// - Complexity: O(n) in the length of `s`.
package func displayWidth(_ s: String) -> Int {
    // Printable ASCII, the common case: one column a byte.
    if s.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return s.utf8.count }
    var width = 0
    for cluster in s { width += displayWidth(of: cluster) }
    return width
}

/// The columns one grapheme cluster takes: its widest scalar's, two when a variation selector asks for emoji
/// presentation (`❤️` is U+2764 U+FE0F).
func displayWidth(of cluster: Character) -> Int {
    var widest = 0
    for scalar in cluster.unicodeScalars {
        if scalar.value == 0xFE0F, widest > 0 { return 2 }
        widest = max(widest, scalarWidth(scalar))
    }
    return widest
}

private func scalarWidth(_ scalar: Unicode.Scalar) -> Int {
    let v = scalar.value
    if v < 0x300 { return 1 }
    switch v {
    case 0x200B...0x200F, 0x2060...0x2064, 0xFE00...0xFE0F, 0xE0100...0xE01EF: return 0
    case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
        0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
        return 2
    default:
        break
    }
    let properties = scalar.properties
    if properties.isEmojiPresentation { return 2 }
    switch properties.generalCategory {
    case .nonspacingMark, .enclosingMark: return 0
    default: return 1
    }
}

/// Whether a terminal would act on `scalar` rather than show it: C0 and C1 controls, DEL, the line and paragraph
/// separators, and the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which
/// reorder the text after them (a value holding U+202E would print the rest of its row backwards).
func actsOnTerminal(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00..<0x20, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}

/// `s` with what a terminal would act on escaped (``actsOnTerminal(_:)``): `\n`, `\t`, `\r`, others as
/// `\u{1b}`, so that a table row or a diagnostic stays one line of text shown as written. Public for the CLI's
/// own tables and charts, whose labels come from stored data too.
/// - Complexity: O(n) in the length of `s`.
package func escapingTerminalControls(_ s: String) -> String {
    guard s.unicodeScalars.contains(where: actsOnTerminal) else { return s }
    var out = ""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\n": out += "\\n"
        case "\t": out += "\\t"
        case "\r": out += "\\r"
        default:
            if actsOnTerminal(scalar) {
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out
}
