"""Worked ReAct examples; the ones most similar to the question go into the prompt.

Written for deepsift about invented places, people and things (none is from a benchmark). Each
step is (thought, action, argument), and a search step adds the excerpts it found as (title,
text). The observations of calculations are computed by the calculator when the prompt is built,
so an example never shows a result the calculator would not give.
"""

EXAMPLES: list[dict] = [
    # search, then calculate
    {
        "kind": "search-then-calculate",
        "question": "By what percentage did the Brackwater ferry's yearly passengers grow from "
        "2015 to 2020?",
        "steps": [
            (
                "I need the passenger numbers for 2015 and 2020.",
                "search",
                "Brackwater ferry passengers 2015 2020",
                [
                    (
                        "Brackwater ferry",
                        "The Brackwater ferry carried 412,000 passengers in 2015 and 530,000 "
                        "in 2020, after a second boat entered service.",
                    )
                ],
            ),
            (
                "412,000 in 2015 and 530,000 in 2020 [1]. I compute the growth.",
                "calculate",
                "(530000 - 412000) / 412000 * 100",
            ),
            ("The growth is about 28.6 percent.", "finish", "about 28.6%"),
        ],
    },
    {
        "kind": "search-then-calculate",
        "question": "How much did the Tarn Valley library cost per square metre?",
        "steps": [
            (
                "I need the library's cost and its floor area.",
                "search",
                "Tarn Valley library construction cost floor area",
                [
                    (
                        "Tarn Valley library",
                        "The Tarn Valley library opened in 2012. It cost 3.6 million euros and "
                        "has 1,800 square metres of floor space on two levels.",
                    )
                ],
            ),
            ("Cost 3.6 million euros, area 1,800 m² [1].", "calculate", "3600000 / 1800"),
            ("2,000 euros per square metre.", "finish", "2,000 euros per square metre"),
        ],
    },
    {
        "kind": "search-then-calculate",
        "question": "What share of the Osric Cooperative's 240 members voted for the merger?",
        "steps": [
            (
                "I need how many members voted for the merger.",
                "search",
                "Osric Cooperative merger vote",
                [
                    (
                        "Osric Cooperative",
                        "At the 2018 assembly, 174 members voted for the merger with Fenn "
                        "Growers, 51 against, and the rest abstained.",
                    )
                ],
            ),
            ("174 of 240 members voted for it [1].", "calculate", "174 / 240 * 100"),
            ("72.5 percent voted for the merger.", "finish", "72.5%"),
        ],
    },
    {
        "kind": "search-then-calculate",
        "question": "How many turbines would the Skerra wind farm need to reach 150 MW?",
        "steps": [
            (
                "I need the capacity of one Skerra turbine.",
                "search",
                "Skerra wind farm turbine capacity",
                [
                    (
                        "Skerra wind farm",
                        "Skerra's 22 turbines are each rated at 4.2 MW; the farm was planned "
                        "to grow to 150 MW by 2030.",
                    )
                ],
            ),
            ("Each turbine gives 4.2 MW [1].", "calculate", "150 / 4.2"),
            (
                "35.7 turbines, so 36 are needed, 14 more than the 22 it has.",
                "finish",
                "36 turbines",
            ),
        ],
    },
    {
        "kind": "search-then-calculate",
        "question": "What was the average attendance per concert of the 2019 Halden Song Week?",
        "steps": [
            (
                "I need the total attendance and the number of concerts.",
                "search",
                "Halden Song Week 2019 attendance concerts",
                [
                    (
                        "Halden Song Week",
                        "The 2019 Halden Song Week held 16 concerts with a total audience of "
                        "9,840.",
                    )
                ],
            ),
            ("9,840 people over 16 concerts [1].", "calculate", "9840 / 16"),
            ("615 people per concert.", "finish", "615"),
        ],
    },
    {
        "kind": "search-then-calculate",
        "question": "How much more did the Pellham bridge cost than its budget, in percent?",
        "steps": [
            (
                "I need the bridge's budget and its final cost.",
                "search",
                "Pellham bridge budget final cost",
                [
                    (
                        "Pellham bridge",
                        "Approved with a budget of 48 million, the Pellham bridge was finished "
                        "in 2016 at a final cost of 61 million.",
                    )
                ],
            ),
            ("Budget 48 million, final cost 61 million [1].", "calculate", "(61 - 48) / 48 * 100"),
            ("About 27.1 percent over budget.", "finish", "about 27.1% over budget"),
        ],
    },
    {
        "kind": "search-then-calculate",
        "question": "If the Corwin Trust grants 15% of its 2.4 million endowment each year, how "
        "much does it grant?",
        "steps": [
            (
                "The question gives the figures; I only need to compute 15% of 2.4 million.",
                "calculate",
                "15% of 2400000",
            ),
            ("360,000 a year.", "finish", "360,000"),
        ],
    },
    # comparison
    {
        "kind": "comparison",
        "question": "Which is taller, the Ardent Tower or the Solway Spire?",
        "steps": [
            (
                "I need the height of the Ardent Tower.",
                "search",
                "Ardent Tower height",
                [("Ardent Tower", "The Ardent Tower, completed in 1998, is 212 metres tall.")],
            ),
            (
                "The Ardent Tower is 212 m [1]. Now the Solway Spire.",
                "search",
                "Solway Spire height",
                [("Solway Spire", "The Solway Spire rises 187 metres above the harbour.")],
            ),
            ("212 m against 187 m [1][2].", "finish", "the Ardent Tower"),
        ],
    },
    {
        "kind": "comparison",
        "question": "Were the painter Lise Ormond and the poet Kai Brenner born in the same "
        "country?",
        "steps": [
            (
                "I need where Lise Ormond was born.",
                "search",
                "Lise Ormond painter born",
                [("Lise Ormond", "Lise Ormond (1921-1990) was a painter born in Lyon, France.")],
            ),
            (
                "Ormond was born in France [1]. Now Kai Brenner.",
                "search",
                "Kai Brenner poet birthplace",
                [("Kai Brenner", "Kai Brenner, a poet, was born in 1934 in Graz, Austria.")],
            ),
            ("France and Austria differ [1][2].", "finish", "no"),
        ],
    },
    {
        "kind": "comparison",
        "question": "Which company was founded first, Quarro Foods or Belling Optics?",
        "steps": [
            (
                "I need both founding years; I search them together first.",
                "search",
                "Quarro Foods Belling Optics founded",
                [
                    ("Quarro Foods", "Quarro Foods was founded in 1957 by two brothers."),
                    ("Belling Optics", "Belling Optics began as a lens workshop in 1949."),
                ],
            ),
            ("1957 against 1949 [1][2]: Belling Optics is older.", "finish", "Belling Optics"),
        ],
    },
    {
        "kind": "comparison",
        "question": "Which lake is larger, Lake Imber or Lake Corra, and by how many square "
        "kilometres?",
        "steps": [
            (
                "I need the area of both lakes.",
                "search",
                "Lake Imber area",
                [("Lake Imber", "Lake Imber covers 84 square kilometres.")],
            ),
            (
                "Lake Imber is 84 km² [1]. Now Lake Corra.",
                "search",
                "Lake Corra area",
                [("Lake Corra", "Lake Corra has a surface area of 57.5 km².")],
            ),
            ("84 against 57.5 [1][2].", "calculate", "84 - 57.5"),
            ("Lake Imber, by 26.5 km².", "finish", "Lake Imber, by 26.5 km²"),
        ],
    },
    {
        "kind": "comparison",
        "question": "Did the films Night Harbour and Paper Kites have the same director?",
        "steps": [
            (
                "I need the director of Night Harbour.",
                "search",
                "Night Harbour film director",
                [("Night Harbour", "Night Harbour (1987) was directed by Mara Quist.")],
            ),
            (
                "Mara Quist directed Night Harbour [1]. Now Paper Kites.",
                "search",
                "Paper Kites film director",
                [("Paper Kites", "Paper Kites is a 1992 drama directed by Mara Quist.")],
            ),
            ("Both were directed by Mara Quist [1][2].", "finish", "yes"),
        ],
    },
    {
        "kind": "comparison",
        "question": "Who lived longer, the composer Elin Sato or the architect Pavel Dorn?",
        "steps": [
            (
                "I need both life dates.",
                "search",
                "Elin Sato composer born died",
                [("Elin Sato", "Elin Sato (1902-1979) was a composer of chamber music.")],
            ),
            (
                "Sato lived from 1902 to 1979 [1]. Now Pavel Dorn.",
                "search",
                "Pavel Dorn architect born died",
                [("Pavel Dorn", "Pavel Dorn (1911-1995) designed the Riven Hall.")],
            ),
            ("I compare their ages at death.", "calculate", "(1979 - 1902) - (1995 - 1911)"),
            ("Sato lived 77 years, Dorn 84: Dorn lived longer by 7 years.", "finish", "Pavel Dorn"),
        ],
    },
    # multi-hop through a bridge entity
    {
        "kind": "multi-hop",
        "question": "In which city was the founder of the Lantern Theatre born?",
        "steps": [
            (
                "First I need who founded the Lantern Theatre.",
                "search",
                "Lantern Theatre founder",
                [("Lantern Theatre", "The Lantern Theatre was founded in 1961 by Iris Caddell.")],
            ),
            (
                "Iris Caddell founded it [1]. Now her birthplace.",
                "search",
                "Iris Caddell born",
                [("Iris Caddell", "Iris Caddell was born in Dunmore in 1930.")],
            ),
            ("She was born in Dunmore [2].", "finish", "Dunmore"),
        ],
    },
    {
        "kind": "multi-hop",
        "question": "What river flows through the town where the Harrow Glassworks is based?",
        "steps": [
            (
                "I need the town of the Harrow Glassworks.",
                "search",
                "Harrow Glassworks location",
                [
                    (
                        "Harrow Glassworks",
                        "The Harrow Glassworks has been based in Elsby since 1880.",
                    )
                ],
            ),
            (
                "It is in Elsby [1]. Now the river of Elsby.",
                "search",
                "Elsby river",
                [("Elsby", "Elsby is a market town on the River Wend.")],
            ),
            ("Elsby lies on the River Wend [2].", "finish", "the River Wend"),
        ],
    },
    {
        "kind": "multi-hop",
        "question": "Who was the spouse of the director of the film Salt Roads?",
        "steps": [
            (
                "I need the director of Salt Roads.",
                "search",
                "Salt Roads film director",
                [("Salt Roads", "Salt Roads (1975) is a film directed by Tomas Vell.")],
            ),
            (
                "Tomas Vell [1]. Now his spouse.",
                "search",
                "Tomas Vell spouse married",
                [("Tomas Vell", "Tomas Vell married the actress Ana Rudd in 1969.")],
            ),
            ("He married Ana Rudd [2].", "finish", "Ana Rudd"),
        ],
    },
    {
        "kind": "multi-hop",
        "question": "Which country is the publisher of the novel The Ninth Orchard based in?",
        "steps": [
            (
                "I need the publisher of The Ninth Orchard.",
                "search",
                "The Ninth Orchard novel publisher",
                [("The Ninth Orchard", "The Ninth Orchard was published by Greywing Press.")],
            ),
            (
                "Greywing Press [1]. Where is it based?",
                "search",
                "Greywing Press headquarters",
                [("Greywing Press", "Greywing Press is a publisher based in Cork, Ireland.")],
            ),
            ("Cork, Ireland [2].", "finish", "Ireland"),
        ],
    },
    {
        "kind": "multi-hop",
        "question": "How old was the founder of Vesta Tools when the company was founded?",
        "steps": [
            (
                "I need the founder and the founding year.",
                "search",
                "Vesta Tools founded founder",
                [("Vesta Tools", "Vesta Tools was founded in 1934 by Oren Falk.")],
            ),
            (
                "Oren Falk, 1934 [1]. Now his birth date.",
                "search",
                "Oren Falk born",
                [("Oren Falk", "Oren Falk (born 1901, died 1977) was an engineer.")],
            ),
            ("Born 1901, founded 1934 [1][2].", "calculate", "1934 - 1901"),
            ("He was 33 (32 if his birthday came later that year).", "finish", "33"),
        ],
    },
    {
        "kind": "multi-hop",
        "question": "What instrument did the teacher of the pianist Runa Hale play?",
        "steps": [
            (
                "I need who taught Runa Hale.",
                "search",
                "Runa Hale pianist teacher",
                [("Runa Hale", "Runa Hale studied piano with Edgar Moss in Vienna.")],
            ),
            (
                "Her teacher was Edgar Moss [1]. Which instrument did he play?",
                "search",
                "Edgar Moss instrument",
                [("Edgar Moss", "Edgar Moss was a cellist and conductor.")],
            ),
            (
                "The question asks what Moss played: the cello [2], not the piano he taught.",
                "think",
                "Moss taught piano but played the cello himself.",
            ),
            ("The cello [2].", "finish", "the cello"),
        ],
    },
    {
        "kind": "multi-hop",
        "question": "Which team did the top scorer of the 2004 Coastal Cup later coach?",
        "steps": [
            (
                "I need the top scorer of the 2004 Coastal Cup.",
                "search",
                "2004 Coastal Cup top scorer",
                [("2004 Coastal Cup", "Dario Lenz was the top scorer of the 2004 Coastal Cup.")],
            ),
            (
                "Dario Lenz [1]. Now his coaching career.",
                "search",
                "Dario Lenz coach",
                [("Dario Lenz", "After retiring, Dario Lenz coached FC Harbin from 2012.")],
            ),
            ("He coached FC Harbin [2].", "finish", "FC Harbin"),
        ],
    },
    # date arithmetic
    {
        "kind": "dates",
        "question": "How many days passed between the opening of the Merrow Canal and its first "
        "closure?",
        "steps": [
            (
                "I need both dates.",
                "search",
                "Merrow Canal opened closed",
                [
                    (
                        "Merrow Canal",
                        "The Merrow Canal opened on 1871-04-12 and was first closed for repairs "
                        "on 1874-09-30.",
                    )
                ],
            ),
            (
                "Opened 1871-04-12, closed 1874-09-30 [1].",
                "calculate",
                "days between 1871-04-12 and 1874-09-30",
            ),
            ("1267 days.", "finish", "1267 days"),
        ],
    },
    {
        "kind": "dates",
        "question": "How old was the explorer Hedda Lind when she reached the Orm Glacier?",
        "steps": [
            (
                "I need her birth date and the date she reached the glacier.",
                "search",
                "Hedda Lind explorer born Orm Glacier",
                [
                    ("Hedda Lind", "Hedda Lind was born on 1888-11-03 in Tromsby."),
                    ("Orm Glacier", "Hedda Lind's party reached the Orm Glacier on 1912-02-17."),
                ],
            ),
            (
                "Born 1888-11-03, reached it 1912-02-17 [1][2].",
                "calculate",
                "years between 1888-11-03 and 1912-02-17",
            ),
            ("She was 23.", "finish", "23"),
        ],
    },
    {
        "kind": "dates",
        "question": "Which happened first, the founding of Kell University or the Treaty of "
        "Arvon, and how many years apart?",
        "steps": [
            (
                "I need both years.",
                "search",
                "Kell University founded",
                [("Kell University", "Kell University was founded in 1794.")],
            ),
            (
                "1794 [1]. Now the treaty.",
                "search",
                "Treaty of Arvon signed",
                [("Treaty of Arvon", "The Treaty of Arvon was signed in 1815.")],
            ),
            ("1794 and 1815 [1][2].", "calculate", "1815 - 1794"),
            (
                "The university came first, 21 years earlier.",
                "finish",
                "Kell University, 21 years earlier",
            ),
        ],
    },
    {
        "kind": "dates",
        "question": "How many weeks did the 1962 Dorne strike last?",
        "steps": [
            (
                "I need when the strike began and ended.",
                "search",
                "1962 Dorne strike began ended",
                [
                    (
                        "Dorne strike",
                        "The Dorne dock strike began on 1962-03-05 and ended on 1962-06-25.",
                    )
                ],
            ),
            (
                "From 1962-03-05 to 1962-06-25 [1].",
                "calculate",
                "weeks between 1962-03-05 and 1962-06-25",
            ),
            ("16 weeks.", "finish", "16 weeks"),
        ],
    },
    {
        "kind": "dates",
        "question": "How long did the architect Pavel Dorn live after finishing the Riven Hall?",
        "steps": [
            (
                "I need when the Riven Hall was finished and when Dorn died.",
                "search",
                "Riven Hall completed Pavel Dorn died",
                [
                    ("Riven Hall", "The Riven Hall, by Pavel Dorn, was completed in 1958."),
                    ("Pavel Dorn", "Pavel Dorn (1911-1995) was an architect."),
                ],
            ),
            ("Finished 1958, died 1995 [1][2].", "calculate", "1995 - 1958"),
            ("37 years.", "finish", "37 years"),
        ],
    },
    # unit conversion
    {
        "kind": "units",
        "question": "How long is the Calder Trail in kilometres?",
        "steps": [
            (
                "I need the trail's length.",
                "search",
                "Calder Trail length",
                [("Calder Trail", "The Calder Trail runs 96 miles from Calder to the coast.")],
            ),
            ("96 miles [1]; I convert it.", "calculate", "96 miles to km"),
            ("About 154.5 km.", "finish", "about 154.5 km"),
        ],
    },
    {
        "kind": "units",
        "question": "What was the record high temperature at Fenmoor station in Celsius?",
        "steps": [
            (
                "I need the record temperature.",
                "search",
                "Fenmoor station record high temperature",
                [("Fenmoor station", "Fenmoor recorded its highest temperature, 104 °F, in 1976.")],
            ),
            ("104 °F [1]; I convert to Celsius.", "calculate", "104 degF to degC"),
            ("40 °C.", "finish", "40 °C"),
        ],
    },
    {
        "kind": "units",
        "question": "How heavy is the Harwick bell in kilograms?",
        "steps": [
            (
                "I need the bell's weight.",
                "search",
                "Harwick bell weight",
                [("Harwick bell", "The great bell of Harwick weighs 3,200 pounds.")],
            ),
            ("3,200 pounds [1].", "calculate", "3200 pound to kg"),
            ("About 1,451 kg.", "finish", "about 1,451 kg"),
        ],
    },
    {
        "kind": "units",
        "question": "What is the Ostrava ring road's speed limit in miles per hour if it is "
        "stated in km/h?",
        "steps": [
            (
                "I need the speed limit.",
                "search",
                "Ostrava ring road speed limit",
                [("Ostrava ring road", "The ring road has a speed limit of 80 km/h.")],
            ),
            ("80 km/h [1].", "calculate", "80 km/h to mph"),
            ("About 49.7 mph.", "finish", "about 49.7 mph"),
        ],
    },
    # not found
    {
        "kind": "not found",
        "question": "What was the opening-day attendance of the Brisk Fair in 1923?",
        "steps": [
            (
                "I need the 1923 attendance.",
                "search",
                "Brisk Fair 1923 attendance",
                [("Brisk Fair", "The Brisk Fair has been held every August since 1902.")],
            ),
            (
                "No attendance figure [1]. I try other words.",
                "search",
                "Brisk Fair visitors opening day 1923",
                [],
            ),
            ("Nothing gives the figure; I will not guess.", "finish", "not found"),
        ],
    },
    {
        "kind": "not found",
        "question": "Who designed the logo of the Merrin Rowing Club?",
        "steps": [
            (
                "I need the designer of the club's logo.",
                "search",
                "Merrin Rowing Club logo designer",
                [
                    (
                        "Merrin Rowing Club",
                        "The Merrin Rowing Club was founded in 1899 and races in blue and white.",
                    )
                ],
            ),
            (
                "The excerpt names no designer [1]. One more search.",
                "search",
                "Merrin Rowing Club emblem designed by",
                [],
            ),
            ("No source names the designer.", "finish", "not found"),
        ],
    },
    {
        "kind": "not found",
        "question": "What is the population of the village of Carnby in 2021?",
        "steps": [
            (
                "I need Carnby's 2021 population.",
                "search",
                "Carnby village population 2021",
                [("Carnby", "Carnby had 1,140 inhabitants at the 2011 census.")],
            ),
            (
                "Only a 2011 figure [1], not 2021. I search the 2021 census once more.",
                "search",
                "Carnby 2021 census",
                [],
            ),
            ("The 2021 figure is not in the sources.", "finish", "not found"),
        ],
    },
]
