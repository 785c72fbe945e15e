//! Kubernetes resource quantities (`100m`, `128Mi`, `1e3`), as `resource.ParseQuantity`
//! reads them (kubernetes/kubernetes
//! `staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`, the grammar in its
//! `Quantity` docs and `parseQuantityString`):
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <signedNumber>    ::= <number> | <sign><number>
//! <sign>            ::= "+" | "-"
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! ```
//!
//! Istio checks its proxy resource annotations with that parser after refusing control
//! characters (istio/istio `pkg/kube/inject/validate.go`, `validateResourceQuantity`).

/// Whether `s` is a quantity; why not.
pub(crate) fn check(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err("it is empty");
    }
    if s.chars().any(char::is_control) {
        return Err("it holds a control character");
    }
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    let whole = digits(&mut i);
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        frac = digits(&mut i);
    }
    if whole + frac == 0 {
        return Err("it does not start with a number");
    }
    let suffix = &s[i..];
    match suffix {
        "" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => Ok(()),
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => Ok(()),
        _ => {
            let Some(exp) = suffix.strip_prefix(['e', 'E']) else {
                return Err("its unit is none of m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei");
            };
            let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
            if !exp.is_empty() && exp.bytes().all(|c| c.is_ascii_digit()) {
                Ok(())
            } else {
                Err("its exponent is not a whole number")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn quantities_as_kubernetes_reads_them() {
        // The valid and invalid values of istio/istio `pkg/kube/inject/validate_test.go`,
        // and the grammar's corners.
        for ok in [
            "100m", "128Mi", "2", "1Gi", "0.5", ".5", "5.", "+1", "-1", "1e3", "1E-3", "1k",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "100m\"\n  - name: injected\n    image: \"busybox",
            "100m\r",
            "100m\t",
            "100m\0",
            "invalid",
            "",
            "100 m",
            " 100m",
            "1.5.0",
            "100MB",
            "1mi",
            "1e",
            "1e1.5",
            ".",
        ] {
            assert!(check(bad).is_err(), "{bad:?}");
        }
    }
}
