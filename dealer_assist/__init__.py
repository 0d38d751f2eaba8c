"""dealer-assist: reads a Spanish 21 table's cards, adjudicates each round, shows what to pay."""

__version__ = "0.1.0"
