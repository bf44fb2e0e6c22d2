"""tokviz.app"""
