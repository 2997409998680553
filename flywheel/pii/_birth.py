"""Dates of birth: a date in any common form near a birth word, in many languages.

Why tables and not a date parser: ``dateparser`` would read any date, but a
date alone is no personal datum (appointments, invoices, releases are dates);
what makes it one is a birth word beside it (``born``, ``geboren``, ``née``,
``urodzona``, ``född``, ``syntynyt``, ``született``, ``doğumlu``...). The
work is in the birth words and the month names of each language (genitive
forms included: ``7 września``, ``6. kesäkuuta``, ``8 Mart``), which a
compact table covers; the date forms are few:

- numeric: ``1966-06-06``, ``6.6.1966``, ``05/08/1983``, ``8-3-58``, ``1972. 03. 08.``;
- day, month name, year (``3 mars 1954``, ``12 de junho de 1972``, ``1er avril
  1949``, ``14 Feb 88``), month name first (``March 3rd, 2021``), year first
  (``1972. március 8.``);
- days and years in English words (``the nineteenth of August nineteen fifty-two``);
- a year alone right after (or before) a birth word (``b. 1968``, ``born in
  1954``, ``classe 1961``, ``Jahrgang 1961``, ``1990 doğumlu``).

The date must come within a few words of the birth word, in the same
sentence, with no other number between them.
"""

from __future__ import annotations

import gzip
import re
from importlib import resources

from flywheel.pii._gate import literals, prefix_trees, trie_pattern
from flywheel.pii._lexicon import strip_marks
from flywheel.pii._types import Detection

#: Month names and abbreviations (lower case) of the languages of Europe and a few more;
#: Slavic, Finnish and Baltic ones in the genitive/partitive a date uses, and the nominative.
_MONTH_WORDS = """
january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec
januar februar märz mai juni juli oktober dezember jän feber mrz okt dez
janvier février fevrier mars avril juin juillet août aout septembre octobre novembre décembre
decembre janv févr fevr avr juil déc
enero febrero marzo abril mayo junio julio agosto septiembre setiembre octubre noviembre
diciembre ene abr ago dic
gennaio febbraio aprile maggio giugno luglio settembre ottobre dicembre gen mag giu lug ott
janeiro fevereiro março marco maio junho julho setembro outubro novembro dezembro fev out
januari februari maart mei augustus
januari februari mars maj augusti
marts
stycznia lutego marca kwietnia maja czerwca lipca sierpnia września wrzesnia października
pazdziernika listopada grudnia styczeń styczen luty marzec kwiecień kwiecien czerwiec lipiec
sierpień sierpien wrzesień wrzesien październik pazdziernik listopad grudzień grudzien
ledna února března dubna května června července srpna září října listopadu prosince
januára februára marca apríla mája júna júla augusta septembra októbra novembra decembra
január február március április május június július augusztus szeptember október
márc ápr máj jún júl szept
tammikuuta helmikuuta maaliskuuta huhtikuuta toukokuuta kesäkuuta heinäkuuta elokuuta
syyskuuta lokakuuta marraskuuta joulukuuta tammikuu helmikuu maaliskuu huhtikuu toukokuu
kesäkuu heinäkuu elokuu syyskuu lokakuu marraskuu joulukuu
ocak şubat subat mart nisan mayıs mayis haziran temmuz ağustos agustos eylül eylul ekim
kasım kasim aralık aralik
ianuarie februarie martie aprilie iunie iulie septembrie octombrie noiembrie decembrie
siječnja veljače ožujka travnja svibnja lipnja srpnja kolovoza rujna listopada studenoga prosinca
gener febrer març maig juny juliol setembre desembre
maret agustus desember
""".split()


def _cldr_months() -> set[str]:
    """Month names of every CLDR language (``scripts/build_month_table.py``), and each
    written without its accents (``septembrie``, ``nasterii``: typed on a plain keyboard)."""
    raw = resources.files("flywheel.pii").joinpath("data/month_names.txt.gz").read_bytes()
    lines = gzip.decompress(raw).decode().splitlines()
    words = {ln for ln in lines if ln and not ln.startswith("#")}
    return words | {strip_marks(w) for w in words}


#: Every month word (lower case). The date patterns take any word where a month goes and a
#: match counts only when its word is one of these (``_month_ok``): one pattern of 6,000
#: words, compiled into each date form, took seconds to compile and was slower to run.
MONTHS: frozenset[str] = frozenset(_MONTH_WORDS) | frozenset(_cldr_months())
#: Words a date may hold besides its month: glue, ordinal suffixes, days and years in words.
_DATE_GLUE = frozenset("de del of the d st nd rd th er re e".split())
_M = r"[^\W\d_]{3,}\.?"
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_TEENS = "ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen"
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
#: Days written as ordinal words ("the twenty-second of November").
_ORDINAL_DAY = (
    r"(?:(?:twenty|thirty)[ \-]?)?(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth)|"
    r"tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
    r"nineteenth|twentieth|thirtieth"
)
#: Years in English words: "nineteen fifty-two", "nineteen oh five", "two thousand and three".
_YEAR_WORDS = (
    rf"(?:eighteen|nineteen|twenty)[ \-](?:hundred|oh[ \-](?:{_UNITS})|{_TEENS}|(?:{_TENS})(?:[ \-](?:{_UNITS}))?)"
    rf"|two[ ]thousand(?:[ ](?:and[ ])?(?:{_TEENS}|{_UNITS}|twenty(?:[ \-](?:{_UNITS}))?))?"
)
_Y4 = r"(?:1[89]|20)\d{2}(?!\d)"
_DAY = r"(?:[12]\d|3[01]|0?[1-9])(?!\d)"
_DAY_SUFFIX = r"(?:st|nd|rd|th|er|re|e|º|°|:e|\.)?"
#: A case ending on a number in the agglutinative languages (Hungarian ``12-én``, ``1976-ban``,
#: Basque ``1958ko``, ``9an``, Finnish ``12:nä``): up to three letters, after a hyphen or not.
_CASE = r"(?:[-:]?[^\W\d_]{1,3}(?![^\W\d_]))?"
#: Compact dates (ISO 8601 basic ``19870812``, and day first ``12081987``), valid months and days.
_MM = r"(?:0[1-9]|1[0-2])"
_DD = r"(?:0[1-9]|[12]\d|3[01])"
_COMPACT = rf"(?:1[89]|20)\d\d{_MM}{_DD}(?!\d)|{_DD}{_MM}(?:1[89]|20)\d\d(?!\d)"
#: Months in Roman numerals (Polish, Czech, Croatian, Hungarian, Romanian, Italian usage:
#: ``12.vii.1989``, ``3 XI 1975``).
_ROMAN = r"xii|xi|x|ix|viii|vii|vi|v|iv|iii|ii|i"
_ROMAN_WORDS = frozenset(_ROMAN.split("|"))
#: Vietnamese writes the month as "tháng" and its number (CLDR ``vi``: ``d MMMM, y`` with
#: MMMM = ``tháng M``), often with "năm" (year) before the year: ``14 tháng 7 năm 1992``.
_VI_MONTH = r"th[áa]ng[ ](?:1[0-2]|0?[1-9])(?!\d),?[ ](?:n[ăa]m[ ])?"
#: One date, in any of the forms of the module docstring (matched case-insensitively).
_DATE = (
    rf"(?:(?:the[ ])?(?:{_ORDINAL_DAY})[ ](?:of[ ])?{_M},?[ ](?:{_Y4}|{_YEAR_WORDS})"
    rf"|{_M}[ ](?:the[ ])?(?:{_ORDINAL_DAY}),?[ ](?:{_Y4}|{_YEAR_WORDS})"
    rf"|{_Y4}-\d{{1,2}}-\d{{1,2}}(?!\d)|{_Y4}[./][ ]?\d{{1,2}}[./][ ]?\d{{1,2}}\.?(?!\d)"
    rf"|{_DAY}[./\-]\d{{1,2}}[./\-](?:\d{{4}}|\d{{2}})(?!\d)"
    rf"|(?<!\d){_COMPACT}"
    rf"|{_DAY}\.[ ](?:1[0-2]|0?[1-9])\.[ ]?(?:{_Y4}|\d{{2}}(?!\d))"
    rf"|{_DAY}\.?[ ]?(?:{_ROMAN})[.\-/ ][ ]?{_Y4}"
    rf"|{_DAY}-{_M}-(?:{_Y4}|\d{{2}}(?!\d))|{_DAY}/{_M}/(?:{_Y4}|\d{{2}}(?!\d))"
    rf"|(?:ng[àa]y[ ])?{_DAY}[ ]{_VI_MONTH}{_Y4}"
    rf"|{_DAY}{_DAY_SUFFIX}[ ]?(?:de[ ]|of[ ]|d['’]|del[ ])?{_M},?[ ](?:de[ ]|del[ ])?"
    rf"(?:{_Y4}|'?\d{{2}}(?!\d)|{_YEAR_WORDS})"
    rf"|{_M}[ ]{_DAY}(?:st|nd|rd|th|\.)?,?[ ](?:{_Y4}|'\d{{2}}(?!\d))"
    rf"|{_Y4}\.?{_CASE}[ ]{_M}[ ]{_DAY}(?:\.|{_CASE})"
    rf"|{_Y4}\.[ ]?\d{{1,2}}\.[ ]?\d{{1,2}}\.?"
    r")"
)
#: Birth words before a date (lower case; a word start before each, no letter after).
_BIRTH_WORDS = """
born birth birthday birthdate dob d.o.b d.o.b. b. date_of_birth
geboren geb. geburtsdatum geburtstag geburtsjahr gebdat
né née né(e) née(s) naissance
nacido nacida nació nacio nací naci nacimiento nac. f._nac.
nato nata nacque nascita
nascido nascida nasceu nasci nascimento
geboortedatum geb.
urodzony urodzona urodził urodzila urodziła urodzil ur. urodzenia
narozen narozena narozená nar. narození narodený narodená narodenia
született szül. születési
syntynyt syntyi syntymäaika syntymäpäivä syntymapaiva syntymaaika
född föddes födelsedatum fødd født fødselsdato fødselsdag
doğum doğdu dogum
născut născută nascut nascuta nașterii
rođen rođena rođenja rodjen rodjena datum_rođenja datum_rodjenja
lahir kelahiran tgl_lahir tanggal_lahir tarikh_lahir
néixer neixer nascut nascuda naixement data_de_naixement nado nada nacemento naceu nacín nacin jaio jaiotze
născut născută nascut nascuta nașterii nasterii naștere nastere
γεννήθηκε γεννήθηκα γέννησης γεννησης γεννηθείς γεννημένος γεννημένη gennithike gennisis
gebore geboore geboorte gebuer gebuerendatum
narodený narodená narodenia narodil narodila
gimęs gimusi gimimo gimė dzimis dzimusi dzimšanas dzimsanas sündinud sünniaeg sünd.
rojen rojena rojstva rojstni rođendan
fæddur fædd fæðingardagur fæðingardag fædt
rugadh breithe ganwyd geni
lindur lindi datëlindja datelindja
ipinanganak kapanganakan isinilang alizaliwa kuzaliwa
születtem születtél szul. szuletett
syntyneen syntymä
doğumlu dogumlu doğum_tarihi
naskiĝis naskiĝdato
jaioa jaiotza jaiotze_data jaiotegun
ngày_sinh ngay_sinh sinh_ngày sinh_ngay sinh_năm năm_sinh sinh_nam nam_sinh ngày_tháng_năm_sinh
nasc. naiss. nac. nasc naiss dt_nasc dat._nar. dat.nar. data_nasc. gebdat. geb.-datum fødd. født.
cumpleaños cumpleanos anniversaire compleanno aniversário verjaardag
came_into_the_world kam_zur_welt kwam_ter_wereld venu_au_monde venue_au_monde vino_al_mundo
llegó_al_mundo llego_al_mundo venuto_al_mondo venuta_al_mondo veio_ao_mundo
dio_a_luz dió_a_luz deu_à_luz deu_a_luz ha_partorito accouché accouchée accouchee
entbunden bevallen_van
""".split()
_BIRTH = "|".join(re.escape(w.replace("_", " ")) for w in sorted(set(_BIRTH_WORDS), key=len, reverse=True))
#: A birth word, then up to sixty characters with no number and no sentence end, then a date.
_DOB_BEFORE = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_BIRTH})(?:(?<=\.)|(?![^\W\d_]))(?P<gap>[^\n\d;!]{{0,60}}?)(?P<d>{_DATE})",
)
#: A birthday without its year ("birthday: 14 March", "Geburtstag am 3. Mai", "né le 4 juillet",
#: "cumpleaños el 14 de marzo"): a day and a written month with nothing but glue between the
#: birth word and the date, and no year after it.
_DAY_MONTH = (
    rf"(?:(?:the[ ])?(?:{_ORDINAL_DAY})[ ](?:of[ ])?{_M}"
    rf"|{_DAY}{_DAY_SUFFIX}[ ]?(?:de[ ]|of[ ]|d['’])?(?:the[ ])?{_M}"
    rf"|{_M}[ ](?:the[ ])?{_DAY}(?:st|nd|rd|th)?)"
    r"(?![^\W\d_])(?![ ,]*(?:de[ ]|del[ ]|of[ ])?'?\d)"
)
_DOB_NO_YEAR = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_BIRTH})(?:(?<=\.)|(?![^\W\d_]))"
    r"(?P<gap>[ \t:,=\-()]*(?:(?:is|was|on|am|le|el|il|em|op|the|ist|war|est|es|è|é|era|den|"
    r"is[ ]on|was[ ]on):?[ \t,]+){0,3})"
    rf"(?P<d>{_DAY_MONTH})"
)
#: The birth word after the date: "am 3. Februar 1991 in Emden geboren", "le 2 mai 1980 est née".
_AFTER_BIRTH = (
    r"geboren|born|née?|nacid[oa]|nat[oa]|nascid[oa]|urodzon[aey]|urodził[a]?|syntyi|syntynyt|"
    r"född|født|fødd|született|doğdu|doğumlu|narozen[áa]?|rođen[a]?|născut[ă]?|"
    r"gebore|lahir|γεννήθηκε|γεννήθηκα|nascut[ăa]?|rojen[a]?|gimęs|gimusi|sündinud|fæddur|fædd|"
    r"jaio(?:a|tako)?|ganwyd|rugadh|"
    # coming into the world: "am 3. Mai 1990 in Kiel zur Welt gekommen", "ter wereld gekomen"
    r"zur[ ]welt|auf[ ]die[ ]welt|ter[ ]wereld|entbunden"
)
_DOB_VERB_AFTER = re.compile(
    rf"(?i)(?P<d>{_DATE})(?:[ \t,]+[^\s.;:!?\d]+){{0,3}}?[ \t,]+(?:{_AFTER_BIRTH})(?![^\W\d_])"
)
_DAY_AFTER = (
    r"geburtstag|birthday|cumpleaños|anniversaire|compleanno|aniversário|verjaardag|urodziny|"
    r"syntymäpäivä|födelsedag|fødselsdag|születésnap|doğum günü"
)
_DOB_AFTER = re.compile(
    rf"(?i)(?P<d>{_DATE})(?:[ \t)(,]{{1,3}}(?:\w+[ ]){{0,2}}(?:{_DAY_AFTER})"
    # a birth word in parentheses after the date: "12.03.1980 (DOB)", "1975-02-12 (date of birth)"
    rf"|[ ]?\([ ]?(?:[^\W\d_]+[ ]){{0,3}}(?:{_BIRTH})(?:(?<=\.)|(?![^\W\d_]))[^()\n\d]{{0,24}}\))"
)
#: A year alone, right after a birth word and its preposition ("b. 1968", "born in 1954",
#: "classe 1961", "Jahrgang 1961", "urodzony w 1963", "syntynyt vuonna 1966").
_YEAR_BEFORE = (
    r"born(?:[ ]in)?|b\.|n[ée]e?(?:\(e\))?[ ]en|nacid[oa](?:[ ]en)?(?:[ ]el[ ]año)?|nat[oa][ ]nel|"
    r"nascid[oa][ ]em|geboren(?:[ ]in|[ ]im[ ]jahre?)?|geb\.|jahrgang|jg\.|classe|rocznik|"
    r"urodzon[ya](?:[ ]w)?(?:[ ]roku)?|ur\.(?:[ ]w)?|född(?:[ ]år)?|født(?:[ ]i)?|fødd(?:[ ]i)?|"
    r"syntynyt(?:[ ]vuonna)?|szül\.|született|narozen[áa]?(?:[ ]v[ ]roce)?|nar\.|rođen[a]?|"
    r"născut[ă]?(?:[ ]în)?|year[ ]of[ ]birth|birth[ ]year|yob|geburtsjahr|année[ ]de[ ]naissance|"
    r"año[ ]de[ ]nacimiento|anno[ ]di[ ]nascita|ano[ ]de[ ]nascimento|geboortejaar|rok[ ]urodzenia|"
    r"födelseår|fødselsår|syntymävuosi|születési[ ]év|doğum[ ]yılı|dogum[ ]yili|"
    r"gebore(?:[ ]im)?|lahir(?:[ ]tahun)?|tahun[ ]lahir|nascut[ăa]?(?:[ ]en|[ ]el|[ ]l'any)?|"
    r"n[ée]ixer[ ]l'any|nad[oa][ ]en|rojen[a]?(?:[ ]leta)?|gimęs|gimusi|dzimis|dzimusi|sündinud|"
    r"fæddur|fædd|γεννήθηκε(?:[ ]το)?|γεννημένος|γεννημένη|ganwyd(?:[ ]yn)?|rugadh[ ]i|"
    r"lindur(?:[ ]më|[ ]ne)?|alizaliwa(?:[ ]mwaka)?|ipinanganak[ ]noong|"
    r"sinh[ ]n[ăa]m|n[ăa]m[ ]sinh|jaiotze[ ]urtea"
)
_YEAR_AFTER_BIRTH = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_YEAR_BEFORE})(?:(?<=\.)|(?![^\W\d_]))[ \t:,]{{0,3}}(?P<d>{_Y4})(?![\d./\-]\d)"
)
#: A year then a birth word: "1990 doğumlu", "1972-ben született", "1961 geboren".
_YEAR_THEN_BIRTH = re.compile(
    rf"(?i)(?<![\d./\-])(?P<d>{_Y4})(?:['’]?(?:da|de|te|ta|ben|ban|-ben|-ban))?[ \t]+"
    r"(?:doğumlu|dogumlu|doğdu|született|geboren|urodzon[ya]|syntynyt|född|født|jaio)"
    r"[^\W\d_]{0,5}(?![^\W\d_])"  # an inflection: "1990 doğumluyum" (I was born in 1990)
)
#: A birth verb, up to three words (no number, no sentence end), then a year: "born in
#: Cardiff in 1964", "gebore in 1963", "nacida en Lugo en 1971".
_YEAR_AFTER_WORDS = re.compile(
    rf"(?i)(?<![^\W\d_])(?:{_AFTER_BIRTH})(?![^\W\d_])(?:[ \t,]+[^\W\d_]+){{1,3}}?[ \t,]+"
    rf"(?P<d>{_Y4})(?![\d./\-]\d)"
)

#: The genealogical sign for born, an asterisk right before the date (German, Dutch and Nordic
#: usage, reference works: "Anna Roth (* 3. Mai 1990 in Kiel)", "Erik Berg, * 1962"), after an
#: opening parenthesis or a comma, never at a line's start (a list item).
_STAR_BIRTH = re.compile(rf"(?i)(?:\(|,[ ])\*[ ]?(?P<d>{_DATE}|{_Y4})")

#: A one-letter birth abbreviation right before a date, nothing between: Nordic ``f.``
#: (født, född, fødd), Finnish ``s.`` (syntynyt), Dutch/German ``geb.`` is a word above.
_LETTER_BIRTH = re.compile(rf"(?i)(?<![^\W\d_])[fs]\.[ ]?(?P<d>{_DATE})")

#: Cheap gates (the case-insensitive patterns are the slow part).


def _gate_pattern() -> re.Pattern[str]:
    """The birth words of every pattern as one prefix tree of their literals (an alternation of
    two hundred words was most of this module's time on text with no birth word)."""
    words: set[str] = set()
    for part in (_BIRTH, _YEAR_BEFORE, _AFTER_BIRTH, _DAY_AFTER):
        found = literals(re.compile(part))
        if not found:
            return re.compile(rf"(?:{_BIRTH}|{_YEAR_BEFORE}|{_AFTER_BIRTH}|{_DAY_AFTER})")
        words.update(found)
    return re.compile(trie_pattern(words))


_GATE_BIRTH = _gate_pattern()
#: The one-letter abbreviations' gate (a lookbehind in the pattern above would make it try
#: every position of every text).
_GATE_LETTER = re.compile(r"[fs]\.[ ]?\d")
_GATE_STAR = re.compile(r"(?:\(|, )\*[ ]?\d")
_DATE_DIGITS = re.compile(
    r"\d{4}|\d[./\-]\d{1,2}[./\-]\d\d|\d[^\W\d_]{0,3}\.?[ \-/][^\W\d_]{3,}\.?,?[ \-/]'?\d\d"
)
_WORD_YEAR = re.compile(r"(?:eighteen|nineteen|twenty|thousand)")
#: A day and a month word, either order (a birthday without its year).
_DAY_MONTH_DIGITS = re.compile(
    r"\d[^\W\d_]{0,3}\.?[ ](?:de[ ]|of[ ])?[^\W\d_]{3}|[^\W\d_]{3}\.?[ ]\d"
)
#: A birthday word is a date of birth only with nothing but glue before the date
#: ("birthday: 3 May 1990", "Geburtstag am 3. Mai 1990"), not "birthday party on ...".
_DAY_WORD = re.compile(
    r"(?i)birthday|geburtstag|fødselsdag|syntymäpäivä|cumpleaños|cumpleanos|anniversaire|"
    r"compleanno|"
    r"aniversário|verjaardag"
)
_GLUE_ONLY = re.compile(
    r"(?i)\A[ \t:,=\-()]*(?:(?:is|was|on|am|le|el|il|em|op|the|ist|war|est|es|è|é|era|den|:)[ \t:,]+){0,3}\Z"
)
_SENTENCE_END = re.compile(r"[.!][ \t]+[A-ZÀ-Þ]")
#: A field name that is a birth word (or holds one: ``date of birth``, ``syntymäaika``).
_BIRTH_FIELD = re.compile(rf"(?i)(?<![^\W\d_])(?:{_BIRTH})(?:(?<=\.)|(?![^\W\d_]))")


_LETTERS = re.compile(r"[^\W\d_]+")


def _month_ok(date: str) -> bool:
    """A date written with words names a month (numeric dates have no words)."""
    words = _LETTERS.findall(date.lower())
    return not words or any(_is_month(w) or _is_month(strip_marks(w)) for w in words)


def _is_month(word: str) -> bool:
    """A month name, or one with a case ending of up to four letters (Estonian ``juulil``,
    Basque ``urriaren``, Hungarian ``decemberben``: the languages that inflect the month
    after a date add to the name CLDR lists)."""
    if word in MONTHS or word in _VI_WORDS or word in _ROMAN_WORDS:
        return True
    return any(word[:n] in MONTHS for n in range(max(4, len(word) - 4), len(word)))


#: The words of the Vietnamese date form (``_VI_MONTH``): month, day and year.
_VI_WORDS = frozenset(("tháng", "thang", "ngày", "ngay", "năm", "nam"))


_WHOLE_DATE = re.compile(rf"(?i)\A(?:{_DATE})\Z")
_LIST_DELIMITERS = ("\t", "|", ";", ",")


def _column_dates(text: str) -> list[Detection]:
    """Dates in the birth column of a list written as text: a line naming its fields with a
    birth word among them (``name, date of birth, phone``; a CSV or markdown header), then
    lines with as many fields, each holding a whole date in that field."""
    out: list[Detection] = []
    lines = text.split("\n")
    pos = 0
    starts = []
    for ln in lines:
        starts.append(pos)
        pos += len(ln) + 1
    i = 0
    while i < len(lines) - 1:
        line = lines[i].lower()
        delim = next((d for d in _LIST_DELIMITERS if d in line), None)
        if delim is None or not _GATE_BIRTH.search(line):
            i += 1
            continue
        heads = line.split(delim)
        col = next((k for k, h in enumerate(heads) if _BIRTH_FIELD.search(h)), None)
        if col is None or len(heads) < 2:
            i += 1
            continue
        j = i + 1
        if delim == "|" and j < len(lines) and set(lines[j].strip()) <= set("|-: "):
            j += 1  # a markdown table's rule
        while j < len(lines):
            cells = lines[j].split(delim)
            if len(cells) != len(heads):
                break
            cell = cells[col]
            core = cell.strip()
            if _WHOLE_DATE.match(core) and _month_ok(core):
                start = starts[j] + sum(len(c) + len(delim) for c in cells[:col]) + cell.index(core)
                out.append(Detection(start, start + len(core), "DOB", 0.6, "dob"))
            j += 1
        i = j
    return out


def detect_birth_dates(text: str) -> list[Detection]:
    """Dates (or years) with a birth word close before or after them (module docstring)."""
    lower = text.lower()
    dated = _DATE_DIGITS.search(text) is not None or _WORD_YEAR.search(lower) is not None
    if not dated and not _DAY_MONTH_DIGITS.search(text):
        return []
    if len(lower) != len(text) or not (
        _GATE_BIRTH.search(lower) or _GATE_LETTER.search(lower) or _GATE_STAR.search(text)
    ):
        if len(lower) == len(text):
            return []
    out = [
        Detection(m.start("d"), m.start("d") + len(m.group("d").rstrip(".")), "DOB", 0.6, "dob")
        for m in _DOB_NO_YEAR.finditer(text)
        if _month_ok(m.group("d"))
    ]
    if not dated:
        return out
    pos = 0
    while (m := _DOB_BEFORE.search(text, pos)) is not None:
        gap = m.group("gap")
        # A birth word whose date is in the next sentence, or a birthday word with more than
        # glue before a date ("the birthday party is planned for 12/05/2024": an event), is
        # no match; the search goes on after the word, so a birth word between is still read
        # ("o aniversário da mãe, que nasceu a 23 de agosto de 1946").
        if _SENTENCE_END.search(gap) or (_DAY_WORD.match(m.group()) and not _GLUE_ONLY.match(gap)):
            pos = m.start("gap")
            continue
        if _month_ok(m.group("d")):
            out.append(Detection(m.start("d"), m.end("d"), "DOB", 0.6, "dob"))
        pos = m.end()
    if "\n" in text:
        out += _column_dates(text)
    if "*" in text and _GATE_STAR.search(text):
        out += [
            Detection(m.start("d"), m.end("d"), "DOB", 0.6, "dob")
            for m in _STAR_BIRTH.finditer(text)
            if _month_ok(m.group("d"))
        ]
    for rx in (
        _DOB_VERB_AFTER,
        _DOB_AFTER,
        _YEAR_AFTER_BIRTH,
        _YEAR_THEN_BIRTH,
        _LETTER_BIRTH,
        _YEAR_AFTER_WORDS,
    ):
        out += [
            Detection(m.start("d"), m.end("d"), "DOB", 0.6, "dob")
            for m in rx.finditer(text)
            if _month_ok(m.group("d"))
        ]
    return out


# The patterns above, each alternation as a prefix tree: the same matches, faster (_gate).
prefix_trees(globals())
