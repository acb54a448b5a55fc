//! Factur-X's declaration in a PDF's XMP metadata: that the file carries an EN 16931 invoice
//! named `factur-x.xml` (the `fx` schema, declared as a PDF/A extension schema, as PDF/A
//! asks of every schema it does not know). krilla writes the metadata without it, so it is
//! added as an incremental update: a new version of the metadata stream appended after the
//! file, with its cross-reference section, which PDF/A allows.

use crate::domain::invoice::cii;

const FX_NAMESPACE: &str = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";

/// The extension schema that declares the `fx` properties.
fn schema() -> String {
    let property = |name: &str, description: &str| {
        format!(
            "<rdf:li rdf:parseType=\"Resource\"><pdfaProperty:name>{name}</pdfaProperty:name>\
             <pdfaProperty:valueType>Text</pdfaProperty:valueType><pdfaProperty:category>external</pdfaProperty:category>\
             <pdfaProperty:description>{description}</pdfaProperty:description></rdf:li>"
        )
    };
    format!(
        "<rdf:li rdf:parseType=\"Resource\" xmlns:pdfaSchema=\"http://www.aiim.org/pdfa/ns/schema#\" \
         xmlns:pdfaProperty=\"http://www.aiim.org/pdfa/ns/property#\">\
         <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>\
         <pdfaSchema:namespaceURI>{FX_NAMESPACE}</pdfaSchema:namespaceURI><pdfaSchema:prefix>fx</pdfaSchema:prefix>\
         <pdfaSchema:property><rdf:Seq>{}{}{}{}</rdf:Seq></pdfaSchema:property></rdf:li>",
        property("DocumentFileName", "name of the embedded XML invoice file"),
        property("DocumentType", "INVOICE"),
        property("Version", "The actual version of the Factur-X XML schema"),
        property("ConformanceLevel", "The conformance level of the embedded Factur-X data"),
    )
}

/// The `fx` properties of a document of UNTDID 1001 type `type_code`.
fn properties(type_code: &str) -> String {
    // Factur-X calls every document an INVOICE but a credit note (381).
    let kind = if type_code == "381" { "CREDIT_NOTE" } else { "INVOICE" };
    format!(
        "<rdf:Description rdf:about=\"\" xmlns:fx=\"{FX_NAMESPACE}\"><fx:DocumentType>{kind}</fx:DocumentType>\
         <fx:DocumentFileName>{}</fx:DocumentFileName><fx:Version>1.0</fx:Version>\
         <fx:ConformanceLevel>{}</fx:ConformanceLevel></rdf:Description>",
        cii::FILE_NAME,
        cii::CONFORMANCE_LEVEL,
    )
}

/// `pdf` with the Factur-X properties added to its XMP metadata.
pub fn declare_factur_x(mut pdf: Vec<u8>, type_code: &str) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(&pdf).into_owned();
    let (number, xmp) = metadata(&text).ok_or("no XMP metadata stream")?;
    let xmp = with_factur_x(&xmp, type_code).ok_or("the XMP metadata has no place for an extension schema")?;
    let trailer = trailer(&text).ok_or("no trailer")?;
    let previous = previous_xref(&text).ok_or("no startxref")?;

    if !pdf.ends_with(b"\n") {
        pdf.push(b'\n');
    }
    let offset = pdf.len();
    pdf.extend_from_slice(
        format!("{number} 0 obj\n<<\n  /Type /Metadata\n  /Subtype /XML\n  /Length {}\n>>\nstream\n", xmp.len())
            .as_bytes(),
    );
    pdf.extend_from_slice(xmp.as_bytes());
    pdf.extend_from_slice(b"\nendstream\nendobj\n");
    let xref = pdf.len();
    let trailer = trailer.trim_end().strip_suffix(">>").ok_or("a trailer that does not end with >>")?;
    pdf.extend_from_slice(
        format!(
            "xref\n{number} 1\n{offset:010} 00000 n \ntrailer\n{}  /Prev {previous}\n>>\nstartxref\n{xref}\n%%EOF\n",
            trailer.trim_end().to_owned() + "\n"
        )
        .as_bytes(),
    );
    Ok(pdf)
}

/// The object number of the metadata stream, and its XMP.
fn metadata(text: &str) -> Option<(u32, String)> {
    // The catalog names it (`/Metadata 25 0 R`): the only `/Metadata` that is followed by a
    // reference, whatever a title or author says.
    let number: u32 = text.match_indices("/Metadata ").find_map(|(at, _)| {
        let rest = &text[at + "/Metadata ".len()..];
        let (number, rest) = rest.split_once(' ')?;
        rest.starts_with("0 R").then(|| number.parse().ok()).flatten()
    })?;
    let header = format!("\n{number} 0 obj\n");
    let at = text.find(&header)? + header.len();
    let stream = at + text[at..].find("stream\n")? + "stream\n".len();
    let end = stream + text[stream..].find("\nendstream")?;
    Some((number, text[stream..end].to_owned()))
}

/// The XMP with the `fx` schema declared and its properties set.
fn with_factur_x(xmp: &str, type_code: &str) -> Option<String> {
    let schemas_end = "</rdf:Bag></pdfaExtension:schemas>";
    let mut xmp = match xmp.find(schemas_end) {
        Some(at) => format!("{}{}{}", &xmp[..at], schema(), &xmp[at..]),
        None => {
            let at = xmp.find("</rdf:RDF>")?;
            let declared = format!(
                "<rdf:Description rdf:about=\"\" xmlns:pdfaExtension=\"http://www.aiim.org/pdfa/ns/extension/\">\
                 <pdfaExtension:schemas><rdf:Bag>{}</rdf:Bag></pdfaExtension:schemas></rdf:Description>",
                schema()
            );
            format!("{}{declared}{}", &xmp[..at], &xmp[at..])
        }
    };
    let at = xmp.find("</rdf:RDF>")?;
    xmp.insert_str(at, &properties(type_code));
    Some(xmp)
}

/// The trailer dictionary of the file's last cross-reference section.
fn trailer(text: &str) -> Option<String> {
    let at = text.rfind("trailer")? + "trailer".len();
    let end = at + text[at..].find("startxref")?;
    Some(text[at..end].trim().to_owned())
}

/// Where the file's last cross-reference section starts.
fn previous_xref(text: &str) -> Option<usize> {
    let at = text.rfind("startxref")? + "startxref".len();
    text[at..].split_whitespace().next()?.parse().ok()
}
