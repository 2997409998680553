"""Which JSON keys (and query parameters, header names) hold which kind of value.

Keys are compared after folding: lower case, accents removed, ``ß`` -> ``ss``,
everything but letters and digits dropped, so ``firstName``, ``first_name``,
``First-Name`` are ``firstname`` and ``contraseña``, ``Straße`` are
``contrasena``, ``strasse``. The vocabulary covers English, German, French,
Spanish, Italian, Portuguese and Dutch field names as they appear in forms,
CRMs and HR systems, and the credential names of HTTP (RFC 9110
``Authorization``, RFC 6265 ``Cookie``), OAuth 2.0 (RFC 6749 ``access_token``,
``refresh_token``, ``client_secret``, ``code``) and common configuration files.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

_NON_ALNUM = re.compile(r"[^a-z0-9]")

#: Labels a key rule may name (``AUTO``: the value's own detected type, NAME for a
#: person-like value; ``CHECKED_ID``: NATIONAL_ID when a check-digit scheme accepts it;
#: ``SECRET_IF_RANDOM``: SECRET when the value is shaped like generated key material,
#: ``flywheel.pii.credential_shaped``).
KEY_LABELS: tuple[str, ...] = (
    "EMAIL",
    "PHONE",
    "NAME",
    "ADDRESS",
    "CARD",
    "IBAN",
    "SSN",
    "NATIONAL_ID",
    "IP",
    "DOB",
    "SECRET",
    "AUTO",
    "CHECKED_ID",
    "SECRET_IF_RANDOM",
)


@lru_cache(maxsize=65536)
def normalise_key(key: str) -> str:
    """Fold a key for comparison (see the module docstring)."""
    folded = unicodedata.normalize("NFKD", key.lower().replace("ß", "ss"))
    return _NON_ALNUM.sub("", "".join(c for c in folded if not unicodedata.combining(c)))


def _rules(**groups: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for label, words in groups.items():
        for w in words.split():
            out[normalise_key(w)] = label
    return out


#: Whole-key rules: the value under such a key is redacted whatever it looks like.
DEFAULT_KEY_RULES: dict[str, str] = _rules(
    EMAIL="email emailaddress mail useremail customeremail contactemail courriel correo "
    "correoelectronico emailadresse posteelectronique",
    PHONE="phone phonenumber telephone tel mobile mobilenumber cellphone cell fax handy "
    "telefon telefonnummer mobil festnetz telephone portable telefono movil celular fijo "
    "cellulare fisso telemovel telefoon mobiel gsm "
    # more languages: sv/da/no, fi, pl, hu, tr, et, eu, cy, af, vi, id/ms, el
    "mobilnummer mobiltelefon telefonnr tlf puhelin puhelinnumero matkapuhelin komorka "
    "nrtelefonu telefonszam mobilszam ceptelefonu telefonoa mugikorra ffon rhifffon selfoon "
    "selnommer sdt sodienthoai dienthoai didong nohp notelepon telepon nomortelepon tilefono",
    NAME="name fullname firstname lastname givenname givennames given forename forenames "
    "familyname surname middlename "
    "displayname customername contactname cardholder cardholdername accountholder "
    "accountholdername holder payee payer beneficiary legalname nickname maidenname "
    "signedby signer signatory signed author assignee owner contactperson "
    "vorname nachname familienname geburtsname kontoinhaber ansprechpartner unterzeichner "
    "nom prenom nomcomplet nomfamille nomdefamille titulaire destinataire signataire "
    "nombre apellido apellidos nombrecompleto titular beneficiario firmante "
    "nome cognome nomecompleto intestatario beneficiario ccname "
    "apelido nomeproprio "
    "naam voornaam achternaam rekeninghouder",
    ADDRESS="address streetaddress street addressline1 addressline2 addressline3 line1 line2 line3 "
    "homeaddress "
    "billingaddress shippingaddress mailingaddress postaladdress deliveryaddress residence "
    "anschrift adresse strasse wohnadresse lieferadresse rechnungsadresse hausnummer "
    "adresselivraison adressepostale domicile rue "
    "direccion domicilio calle direccionenvio "
    "indirizzo domicilio "
    "morada endereco rua "
    "adres straat woonadres "
    "housenumber hausnr huisnummer straatnaam adresszeile numerocivico",
    CARD="card cardnumber creditcard creditcardnumber ccnumber pan kartennummer "
    "numerocarte numerotarjeta tarjeta numerocarta",
    IBAN="iban ibancode bankaccount accountnumber kontonummer rib cuenta numerocuenta conto",
    SSN="ssn socialsecuritynumber",
    NATIONAL_ID="nationalid taxid tin passport passportnumber idnumber idcard "
    "steuerid steuernummer steueridentifikationsnummer personalausweis ausweisnummer "
    "sozialversicherungsnummer svnr versichertennummer krankenversichertennummer "
    "nir insee numerosecu numerosecuritesociale securitesociale "
    "dni nie nif nss numseguridadsocial numerosegurosocial seguridadsocial "
    "codicefiscale cf "
    "cpf "
    "bsn burgerservicenummer "
    "pesel hetu henkilotunnus fodselsnummer fnr cprnr cprnummer tckimlik tckimlikno tckn "
    "kimlikno aadhaar aadhar rijksregisternummer personnr "
    # a passport number (no check digit outside the machine-readable zone)
    "passportno passportnr passportid numeropasaporte numpasaporte numeropasseport "
    "numeropassaporto reisepassnummer passnummer passnr paspoortnummer numerpaszportu "
    "pasaportno pasaportnumarasi hochieu sohochieu passinumero utlevelszam",
    IP="ip ipaddress clientip remoteaddr remoteip sourceip srcip xforwardedfor xrealip",
    DOB="dob dateofbirth birthdate birthday bday born geburtsdatum geburtstag geb gebdat gebdatum "
    "geboren datenaissance "
    "datedenaissance naissance fechanacimiento fechadenacimiento nacimiento datadinascita "
    "datanascita datadenascimento datanascimento geboortedatum fnac fnacimiento nacido "
    "nacida nato nata nascido nascida nascimento nascita urodzony urodzona dataurodzenia "
    "syntymaaika syntymapaiva fodelsedatum fodd fodselsdato fodt dogumtarihi szuletesidatum "
    "szuletett datumnarozeni narozen nar narozena datumnarodenia narodeny narodena "
    "datadenacemento datanacemento yob birthyear yearofbirth geburtsjahr "
    # HTML's autofill field names (WHATWG: bday-day, bday-month, bday-year); the French DDN
    "bdayday bdaymonth bdayyear ddn fechanac fecnac fechnac cumpleanos compleanno verjaardag "
    "anniversaire",
    SECRET="password passwd pwd pass passphrase passcode pin secret clientsecret "
    "token accesstoken refreshtoken idtoken authtoken apitoken bearertoken sessiontoken "
    "apikey xapikey apisecret secretkey accesskey accesskeyid secretaccesskey privatekey "
    "privatekeyid accountkey sharedaccesskey signingkey encryptionkey masterkey "
    "authkey authsecret authorization proxyauthorization cookie setcookie sessionid sid jsessionid phpsessid "
    "credentials credential "
    "passwort kennwort geheimnis zugangsdaten "
    "motdepasse mdp jeton cleapi clesecrete "
    "contrasena clave claveapi "
    "chiave chiaveapi "
    "senha "
    "wachtwoord losenord passord adgangskode salasana haslo heslo jelszo sifre parola "
    "oauth oauthtoken "
    # one-time passwords (HOTP/TOTP, RFC 4226/6238; HTML's autofill "one-time-code"), account
    # recovery codes and phrases, answers to security questions, card security codes (HTML's
    # "cc-csc"; PCI DSS sensitive authentication data), Wi-Fi pre-shared keys
    "otp otpcode totp hotp onetimecode onetimepassword mfacode twofactorcode 2facode "
    "recoverycode recoverycodes backupcode backupcodes recoverykey recoveryphrase seedphrase "
    "mnemonic securityanswer secretanswer securityquestionanswer cvv cvv2 cvc cvc2 csc cccsc "
    "cardcvv cardcvc kartenpruefnummer cryptogramme psk wifikey wlankey netzwerkschlussel "
    "wlanschlussel",
    AUTO="addr recipient recipients sender from to cc bcc attendees participants contact "
    "contacts empfaenger absender expediteur remitente destinatarios mittente "
    "contatto contacto "
    # people a record is about: their value is redacted when it is a person-like value
    # (capitalised words), and stays when it is an id ("customer": "C-0193")
    "customer client patient passenger guest member employee tenant student pupil "
    "driver consignee shipper courier skipper captain crew nurse pharmacist prescriber doctor "
    "physician dentist vet veterinarian technician adjuster inspector witness guardian parent "
    "child spouse reviewer translator interpreter caller operator agent handler groomer "
    "applicant candidate traveller traveler insured policyholder midwife caregiver carer "
    "kunde kundin patientin passagier gast mitglied mitarbeiter mitarbeiterin mieter mieterin "
    "fahrer fahrerin schueler schuelerin bewerber bewerberin versicherter hebamme "
    "locataire eleve etudiant etudiante voyageur adherent salarie candidat candidate sagefemme "
    "paciente pasajero pasajera huesped socio socia empleado empleada inquilino inquilina "
    "alumno alumna conductor conductora matrona "
    "cliente paziente passeggero ospite dipendente inquilino studente alunno autista "
    "klant patient passagier huurder leerling werknemer bestuurder "
    "passageiro hospede funcionario inquilino aluno aluna motorista",
)

#: Keys of a document or an identity whose value is a national id only when its check
#: digits pass (``CHECKED_ID``, see ``flywheel.pii._ids``): ``{"doc": "123456782"}`` is a
#: BSN, ``{"doc": "README-v2"}`` stays.
DEFAULT_KEY_RULES.update(
    _rules(
        CHECKED_ID="doc docno docnr docnumber document documentno documentnumber documentid "
        "documento numerodocumento numdocumento dokument dokumentnummer dokumentnr "
        "identification identity identite identidad identita identiteit identidade "
        "personalnumber personnummer nino ninumber nationalinsurance nationalinsurancenumber "
        "cpr kimlik rc rodnecislo"
    )
)
#: An Azure shared access signature's ``sig``: a credential when it looks generated.
DEFAULT_KEY_RULES.update(_rules(SECRET_IF_RANDOM="sig"))
#: A user name is a credential when it is generated key material: a DSN's public key or a
#: token written as the user of a URL (``https://<key>@host``, the ``username`` a URL's
#: userinfo is decoded under), ``{"username": "AKIA..."}``; ``deploy-bot`` stays.
DEFAULT_KEY_RULES.update(_rules(SECRET_IF_RANDOM="username"))

#: Key suffix rules (the longest matching suffix wins: ``ipaddress`` beats ``address``).
DEFAULT_KEY_SUFFIXES: dict[str, str] = _rules(
    EMAIL="email emailaddress mail",
    PHONE="phone phonenumber telephone telefon telefono puhelin puhelinnumero dienthoai "
    "telefonszam",
    NAME="firstname lastname fullname surname givenname familyname vorname nachname prenom "
    "nombre apellido cognome",
    IP="ipaddress",
    ADDRESS="address adresse anschrift direccion indirizzo strasse hausnummer",
    IBAN="iban",
    CARD="cardnumber",
    SSN="ssn",
    DOB="birthdate dateofbirth geburtsdatum naissance nacimiento nascita",
    SECRET="password passwd secret token apikey accesskey secretkey privatekey cookie "
    "sessionid passwort motdepasse contrasena authorization oauth credentials losenord passphrase "
    "passord salasana haslo jelszo sifre",
    # any other "...key" (licenseKey, subscription_key, routing_key, integrationKey) and the
    # word key of other languages: a key when the value looks generated, else a name or id
    SECRET_IF_RANDOM="key schluessel cle chave chiave sleutel nogle nokkel nyckel avain "
    "klucz kulcs anahtar cheie klic kljuc "
    # a signed URL's signature is its credential while it lasts (AWS SigV4 X-Amz-Signature,
    # Google Cloud Storage X-Goog-Signature, CloudFront Signature)
    "signature",
)
#: Keys ending in a key word that name no credential: a public key, a de-duplication,
#: idempotency, sort, partition, cache or issue key.
_NOT_CREDENTIAL_KEY = re.compile(
    r"(?:public|pub|dedup|deduplication|idempotency|sort|primary|partition|foreign|cache|"
    r"issue|project|row|object|lookup|hot|shortcut|map|group|index|translation|i18n|message)key\Z"
)


def key_label(
    key: str, rules: dict[str, str] | None = None, suffixes: dict[str, str] | None = None
) -> str | None:
    """The label a key imposes on its value under ``rules``/``suffixes`` (the defaults)."""
    if rules is None and suffixes is None:
        return _default_label(key)
    return _label(normalise_key(key), DEFAULT_KEY_RULES if rules is None else rules,
                  _by_length(DEFAULT_KEY_SUFFIXES if suffixes is None else suffixes))


def _by_length(suffixes: dict[str, str]) -> list[tuple[str, str]]:
    return sorted(suffixes.items(), key=lambda kv: -len(kv[0]))


_DEFAULT_SUFFIXES = _by_length(DEFAULT_KEY_SUFFIXES)


@lru_cache(maxsize=1)
def _id_word_keys() -> frozenset[str]:
    """The id words of prose as keys (``CHECKED_ID``).

    Those of ``flywheel.pii._ids``, ``python-stdnum``'s scheme names included: a column
    ``CNP``, ``PPS`` or ``AMKA`` holds a national id when its check digits pass. A user id
    (``uid``) is no such column.
    """
    from flywheel.pii._ids import ID_WORDS, scheme_id_words

    keys = {normalise_key(w) for w in (*ID_WORDS, *scheme_id_words())}
    return frozenset(k for k in keys if len(k) >= 3) - {"uid", "pan"}


#: Stems of the word birth in many languages, as folded keys hold them (``data_nasc``,
#: ``dt_nascimento``, ``tgl_lahir``, ``rodjendan``, ``fodselsdag``): a key holding one is a
#: date of birth (or, for ``birthplace``, a place of birth: personal too).
_BIRTH_STEMS = re.compile(
    r"birth|geburt|gebdat|naiss|nacim|nasc|nastere|nasterii|naixe|geboorte|urodz|narozen|"
    r"naroden|syntym|fodsel|fodelse|szulet|dogum|lahir|rodjen|gennis|gimim|dzimsan|sunnia|"
    r"faeding|breith|kuzaliwa|kapanganakan|ngaysinh|namsinh|jaio"
)


#: Words for a part of a person's name in many languages (folded): a key or table column made
#: of them only ("first", "last", "NUME Prenume", "fornavn", "sukunimi") holds a person's name
#: when its value is person-like (AUTO: ``{"first": 10}`` stays a number).
_NAME_PARTS = frozenset(
    normalise_key(w)
    for w in "first last given family middle forename surname name names nume prenume numele "
    "navn fornavn efternavn etternavn mellomnavn fornamn förnamn efternamn tilltalsnamn "
    "etunimi sukunimi jmeno jméno prijmeni příjmení meno priezvisko imie imię nazwisko "
    "vezeteknev vezetéknév keresztnev keresztnév utonev utónév ad adi adı soyad soyadi soyadı "
    "onoma eponymo epitheto nama namadepan namabelakang namalengkap ime prezime priimek "
    "vardas pavarde pavardė vards uzvards uzvārds eesnimi perekonnanimi nafn eftirnafn "
    "ainm sloinne enw cyfenw jina hoten ten ho nombre nombres apellido apellidos nom prenom "
    "prénom nome cognome sobrenome naam voornaam achternaam vorname nachname full".split()
)
#: Words of a postal address's parts as field names in the languages of the key rules (folded),
#: and the words that only qualify them: a key made of these ("house_number", "nom_rue",
#: "adresse_ligne1", "Straße und Hausnummer", "indirizzo_residenza") holds an address.
_ADDRESS_PARTS = frozenset(
    normalise_key(w)
    for w in "address addr adresse adres anschrift direccion dirección indirizzo endereco "
    "endereço morada strasse straße street calle rue straat straatnaam logradouro domicilio "
    "adresszeile hausnummer huisnummer housenumber hausnr civico".split()
)
_ADDRESS_QUALIFIERS = frozenset(
    normalise_key(w)
    for w in "line ligne linea zeile number nr no num numero número name nom nombre nome naam "
    "completo completa complete full fiscal residenza residencia residence home and und y e et "
    "de di da do del du house haus huis via postal postale".split()
)
#: Keys ending in an address word that name a network, hardware or ledger address, not a
#: postal one ("mac_address", "bind_address", "wallet_address"): read as text.
_NOT_POSTAL = re.compile(
    r"\A(?:mac|wallet|server|bind|listen|host|proxy|gateway|contract|web|memory|mem|base|"
    r"remote|local|peer|node|broker|smtp|dns|cluster|endpoint|socket|network|net|link|multicast|"
    r"broadcast|hardware|physical|virtual|bitcoin|btc|eth|ethereum|crypto|lightning|ipv[46]|"
    r"public|private|ble|bluetooth|i2c|modbus|register|bus|device)"
)

#: Words that qualify a credential without changing what it is ("password_temporal",
#: "pin_initial"); a key about the credential ("password_policy", "token_type") is none.
_CREDENTIAL_QUALIFIERS = frozenset(
    "temporal temporary temp tmp initial new neu neue nuevo nueva nouveau nouvelle nuovo nuova "
    "novo nova old current actual provisional provisoire temporaire provisorio provvisoria "
    "vorlaeufig default plain plaintext clear onetime otp admin root user app web".split()
)
#: Words of a key about a document rather than its number ("passport_expiry", "dni_photo").
_DOCUMENT_FACTS = frozenset(
    "expiry expires expiration expire date issued issue valid validity until country type "
    "photo image scan file url status copy front back".split()
)
_KEY_TOKEN = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[^\W\d_]+")


def _key_tokens(key: str) -> list[str]:
    """A key's words: split at punctuation, spaces and camelCase, folded."""
    return [normalise_key(t) for t in _KEY_TOKEN.findall(key)]


@lru_cache(maxsize=65536)
def _default_label(key: str) -> str | None:
    label = _label(normalise_key(key), DEFAULT_KEY_RULES, _DEFAULT_SUFFIXES)
    return label if label is not None else derived_label(key)


@lru_cache(maxsize=65536)
def derived_label(key: str) -> str | None:
    """The label of a key no whole-key or suffix rule names, from the language tables.

    A key made of name-part words (``first``, ``NUME Prenume``, ``fornavn``) or ending in a
    person word (``emergency_contact``) is AUTO; a key with a birth word among its words
    (``nato_il``) is DOB, a credential word and qualifiers only (``password_temporal``)
    SECRET; an id word of prose or of a
    ``python-stdnum`` scheme (``CNP``, ``PPS``, ``AMKA``), alone, first or last in the key
    (``invoice_nif``, ``pesel_matki``), is CHECKED_ID; a birth stem
    (``data_nasc``, ``tgl_lahir``) is DOB. Redaction applies it after a policy's own rules.
    """
    norm = normalise_key(key)
    base = norm.rstrip("0123456789")
    if base != norm and base and DEFAULT_KEY_RULES.get(base) in ("ADDRESS", "AUTO"):
        return DEFAULT_KEY_RULES[base]  # "address1", "street2" (a form's numbered lines), "addr1"
    tokens = _key_tokens(key)
    if (
        len(tokens) >= 2
        and all(t in _ADDRESS_PARTS or t in _ADDRESS_QUALIFIERS for t in tokens)
        and any(t in _ADDRESS_PARTS for t in tokens)
    ):
        return "ADDRESS"  # "house_number", "nom_rue", "adresse_ligne1", "street_and_number"
    if tokens and all(t in _NAME_PARTS for t in tokens):
        return "AUTO"
    if len(tokens) >= 2 and DEFAULT_KEY_RULES.get(tokens[-1]) in ("AUTO", "NAME"):
        return "AUTO"
    if len(tokens) >= 2:
        rules = [DEFAULT_KEY_RULES.get(t) for t in tokens]
        if "DOB" in rules:
            return "DOB"  # "nato_il", "born_on", "geboren_am": a birth word and a preposition
        if rules[0] == "SECRET" and all(t in _CREDENTIAL_QUALIFIERS for t in tokens[1:]):
            return "SECRET"  # "password_temporal", "pin_initial", "token_new"
    ids = _id_word_keys()
    if norm in ids or (
        len(tokens) >= 2
        and (tokens[-1] in ids or "".join(tokens[-2:]) in ids
             or (tokens[0] in ids and _DOCUMENT_FACTS.isdisjoint(tokens)))
    ):  # fmt: skip
        return "CHECKED_ID"  # "CNP", "fatura_nif", "pesel_matki", "patient_nhs_number"
    if _BIRTH_STEMS.search(norm):
        return "DOB"
    return None


def _label(norm: str, table: dict[str, str], suffixes: list[tuple[str, str]]) -> str | None:
    label = table.get(norm)
    if label is not None:
        return label
    for suffix, lab in suffixes:
        if norm.endswith(suffix):
            return lab if suffix_applies(norm, suffix, lab) else None
    return None


#: Key-rule labels whose entity depends on the value: ``value_label`` resolves the last two,
#: AUTO takes the type detected for the whole value (its caller's detector).
CONDITIONAL_LABELS: tuple[str, ...] = ("AUTO", "CHECKED_ID", "SECRET_IF_RANDOM")


#: A business reference: a code in capitals, a year, a serial ("ZK-2026-0419", "INV_2025_88").
_DATED_REFERENCE = re.compile(r"\A[A-Z]{2,6}[-_/](?:19|20)\d\d[-_/]\d{2,8}\Z")


def value_label(label: str, value: str) -> str | None:
    """The label a key rule gives ``value``, or None when the rule does not hold.

    ``CHECKED_ID`` is NATIONAL_ID when a check-digit scheme accepts the value,
    ``SECRET_IF_RANDOM`` is SECRET when it is shaped like generated key material
    (``credential_shaped``); None means: read the value as text. ``SECRET`` holds for
    any value but a dated business reference (``ORD-2026-0042`` under a ``sessionId``
    key: a payment gateway's session is the merchant's order) or a payment provider's public
    object id (``tok_1QxR8f...`` under a ``token`` key: a card token, ``public_object_id``). Any other label is
    returned as it is.
    """
    if label == "SECRET":
        from flywheel.pii._secrets import public_object_id

        v = value.strip()
        return None if _DATED_REFERENCE.match(v) or public_object_id(v) else label
    if label == "CHECKED_ID":
        from flywheel.pii._ids import national_id_scheme

        return "NATIONAL_ID" if national_id_scheme(value) else None
    if label == "SECRET_IF_RANDOM":
        from flywheel.pii._secrets import credential_shaped

        return "SECRET" if credential_shaped(value) else None
    return label


def suffix_applies(norm: str, suffix: str, label: str) -> bool:
    """Whether a suffix rule holds for a folded key that ends with it.

    Not for the suffix's plural alone (``addresss``), nor, for a key word
    (``SECRET_IF_RANDOM``), for ``key`` alone (a keyboard key, an issue key) or a key that
    names no credential (``publicKey``, ``dedup_key``, ``sortKey``).
    """
    if norm == suffix + "s":
        return False
    if label == "ADDRESS" and norm != suffix and _NOT_POSTAL.match(norm):
        return False
    return label != "SECRET_IF_RANDOM" or not (norm == suffix or _NOT_CREDENTIAL_KEY.search(norm))


# A value under a name key that is an identifier (tool name, file name, slug, handle), not a
# person: punctuation or digits inside and no spaces, or one lower-case word.
_IDENTIFIER = re.compile(r"\A[A-Za-z0-9_.\-/:]*[_.\-/:0-9][A-Za-z0-9_.\-/:]*\Z")
_LOWER_WORD = re.compile(r"\A[a-z0-9]+\Z")
# A double-barrelled name ("Nkemelu-Vasseur", "Jean-Pierre") is no identifier.
_HYPHENATED_NAME = re.compile(r"\A[A-ZÀ-Þ][a-zß-ÿ'’]+(?:-[A-ZÀ-Þ][a-zß-ÿ'’]+)+\Z")


def is_identifier(value: str) -> bool:
    """True for ``get_weather``, ``platform-team``, ``report.pdf``, ``admin``; False for a person.

    Capitalised words joined by hyphens (``Quenneville-Ardouin``,
    ``Jean-Pierre``) are a name, not an identifier.
    """
    v = value.strip()
    if _LOWER_WORD.match(v):
        return True
    return _IDENTIFIER.match(v) is not None and _HYPHENATED_NAME.match(v) is None


#: Keys of an object about a thing, not a person: an animal (breed, species, microchip), a
#: product (SKU, EAN/GTIN, model), a vessel (IMO, MMSI). The name of such an object is the
#: thing's name ("Canela", "Nordlys"), which the name keys alone would take for a person's.
_THING_KEYS = frozenset(
    normalise_key(k)
    for k in "breed raza rasse race razza ras raca species especie espece specie soort "
    "microchip chip chipnumber chipnummer sku ean gtin upc model modelo modell modele "
    "imo mmsi hull".split()
)
#: Keys of a thing's serial or model number in the languages of the key rules: what they hold
#: identifies a device, not the person whose record it sits in.
_SERIAL_KEYS = frozenset(
    normalise_key(k)
    for k in "serial serialno serialnr serialnumber sn seriennummer seriennr serien_nr "
    "numerodeserie numeroserie numserie nserie matricola serienummer serienr serienummer "
    "modelnumber modelno typ type baujahr".split()
)


def thing_key(key: str) -> bool:
    """Whether ``key`` describes a thing (a serial or model number, a breed, a product code):
    its value is no personal datum even inside a person's record (``{"customer": {"boiler":
    {"serial_no": "7571234500123456"}}}``)."""
    norm = normalise_key(key)
    return norm in _SERIAL_KEYS or norm in _THING_KEYS


#: The keys that hold an object's own name, in the languages of the key rules.
_OWN_NAME_KEYS = frozenset(
    normalise_key(k) for k in "name nombre nom nome naam navn namn nimi nazwa isim".split()
)


def own_name_key(key: str) -> bool:
    """Whether ``key`` is a bare "name" of some language (``name``, ``nom``, ``navn``): the name
    of whatever the record is about, not necessarily a person's (``Name: Standard plan``)."""
    return normalise_key(key) in _OWN_NAME_KEYS


def names_a_thing(key: str, siblings: Iterable[str]) -> bool:
    """Whether ``key`` is the own-name key of an object whose other keys say it is a thing."""
    return normalise_key(key) in _OWN_NAME_KEYS and any(
        normalise_key(k) in _THING_KEYS for k in siblings
    )
