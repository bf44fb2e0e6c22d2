"""tokviz.panels"""
